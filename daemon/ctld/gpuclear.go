package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/sharq-hpc/sharq/api"
)

// The GPU faults an admin cleared (sharqctl node resume) outlive a
// controller restart: the spool keeps them (clearedGPUFaultsKey), as it
// keeps drains and comments, so that a controller that starts again, or a
// new leader, neither fences again a GPU its node daemon still reports
// (it keeps a fault until it restarts) nor requeues a job placed on it
// since. A cleared fault is forgotten, and the spool rewritten, once its
// node no longer reports it; a new fault of the same GPU (another time)
// fences it again.

// clearedGPUFaultsKey is where the spool keeps the cleared faults: a JSON
// object of node name to its cleared faults.
const clearedGPUFaultsKey = "gpu-faults-cleared"

// clearedFault is one cleared fault as the spool keeps it: the GPU, the
// kind and the node's time of it (gpuFaultKey).
type clearedFault struct {
	Index int              `json:"index"`
	Kind  api.GPUFaultKind `json:"kind"`
	At    int64            `json:"at"` // Unix nanoseconds
}

// saveClearedGPUFaults writes every node's cleared faults to the spool
// (synced).
func (c *Controller) saveClearedGPUFaults() error {
	all := map[string][]clearedFault{}
	for _, name := range slices.Sorted(maps.Keys(c.nodes)) {
		var fs []clearedFault
		for k := range c.nodes[name].gpu.cleared {
			fs = append(fs, clearedFault{Index: k.index, Kind: k.kind, At: k.at})
		}
		if len(fs) == 0 {
			continue
		}
		sort.Slice(fs, func(i, j int) bool {
			a, b := fs[i], fs[j]
			if a.Index != b.Index {
				return a.Index < b.Index
			}
			if a.Kind != b.Kind {
				return a.Kind < b.Kind
			}
			return a.At < b.At
		})
		all[name] = fs
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return c.sp.SetState(bgctx, clearedGPUFaultsKey, b)
}

// restoreClearedGPUFaults reads the cleared faults back after a restart;
// a node no longer configured, a GPU index out of range and more than
// maxGPUFaults of one node are left out.
func (c *Controller) restoreClearedGPUFaults(ctx context.Context) error {
	b, err := c.sp.State(ctx, clearedGPUFaultsKey)
	if err != nil || b == nil {
		return err
	}
	var all map[string][]clearedFault
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("spool state %s: %w", clearedGPUFaultsKey, err)
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if c.cfg.Node(name) == nil {
			continue
		}
		g := &c.node(name).gpu
		for _, f := range all[name] {
			if len(g.cleared) >= maxGPUFaults {
				break
			}
			if f.Index < 0 || f.Index >= 256 {
				continue
			}
			if g.cleared == nil {
				g.cleared = map[gpuFaultKey]bool{}
			}
			g.cleared[gpuFaultKey{f.Index, f.Kind, f.At}] = true
		}
		if n := len(g.cleared); n > 0 {
			c.log.Info("GPU faults an admin cleared restored: not fenced again", "node", name, "faults", n)
		}
	}
	return nil
}

// clearedFaultsForgotten rewrites the spool's cleared faults once a node
// stopped reporting some of them; a spool error is logged (the next
// change writes them all again).
func (c *Controller) clearedFaultsForgotten(n *node) {
	if err := c.saveClearedGPUFaults(); err != nil {
		c.log.Error("spool the cleared GPU faults", "node", n.name, "err", err)
	}
}
