package gpu

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// GPU health. The node daemon watches its GPUs through NVML (WatchHealth:
// Xid critical errors and double-bit ECC errors as events, and every check
// interval whether each GPU still answers, its volatile uncorrectable ECC
// count and whether its row remapper failed). What it finds is a fault
// (api.GPUFault), kept in Health for as long as the daemon runs and
// reported in every heartbeat; the controller fences the GPU until an
// admin clears it after a reset.
//
// Xids: the ones a job's own code causes (13 graphics engine exception,
// 31 memory page fault, 43 GPU stopped processing, 45 preemptive cleanup,
// 68 video decoder exception, 109 context switch timeout: the list NVIDIA's
// device plugin for Kubernetes ignores) and 63 (a row remap recorded, to be
// applied at the next reset: the periodic check catches one that fails)
// say nothing of the GPU's health and are ignored. Every other Xid fences
// the GPU; those after which no job can go on (fatalXids) also requeue the
// job running there.

// Health is the node's record of its sick GPUs: one fault per GPU and
// kind, the first seen (a fatal one replaces one that was not). Its
// methods are safe for concurrent use.
type Health struct {
	mu      sync.Mutex
	faults  []api.GPUFault
	changed chan struct{}
}

// NewHealth returns an empty record.
func NewHealth() *Health { return &Health{changed: make(chan struct{}, 1)} }

// Changed is signalled (one pending signal) when a fault is added.
func (h *Health) Changed() <-chan struct{} { return h.changed }

// Faults returns the faults, by GPU index then kind.
func (h *Health) Faults() []api.GPUFault {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.faults)
}

// Add records f unless the GPU has a fault of its kind already (one that
// is not fatal gives way to a fatal one), and reports whether it did.
func (h *Health) Add(f api.GPUFault) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, found := slices.BinarySearchFunc(h.faults, f, cmpFault)
	switch {
	case !found:
		h.faults = slices.Insert(h.faults, i, f)
	case f.Fatal && !h.faults[i].Fatal:
		h.faults[i] = f
	default:
		return false
	}
	select {
	case h.changed <- struct{}{}:
	default:
	}
	return true
}

func cmpFault(a, b api.GPUFault) int {
	if a.Index != b.Index {
		return a.Index - b.Index
	}
	switch {
	case a.Kind < b.Kind:
		return -1
	case a.Kind > b.Kind:
		return 1
	}
	return 0
}

// ignoredXids say nothing of the GPU's health (see above).
var ignoredXids = map[uint64]bool{13: true, 31: true, 43: true, 45: true, 63: true, 68: true, 109: true}

// fatalXids end every job on the GPU; the GPU needs a reset (NVIDIA's Xid
// catalog): what they are called.
var fatalXids = map[uint64]string{
	48:  "double-bit ECC error",
	62:  "internal micro-controller halt",
	64:  "ECC page retirement or row remapping failure",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
	120: "GSP error",
	140: "unrecovered ECC error",
}

// otherXids fence the GPU but leave its job running: what they are called.
var otherXids = map[uint64]string{
	92: "high single-bit ECC error rate",
	94: "contained ECC error",
}

// XidFault is the fault an Xid critical error on GPU index (uuid) at t
// means; ok is false for an Xid that says nothing of the GPU's health.
func XidFault(index int, uuid string, xid uint64, t time.Time) (f api.GPUFault, ok bool) {
	if ignoredXids[xid] || xid > 1<<20 {
		return f, false
	}
	f = api.GPUFault{Index: index, UUID: uuid, Kind: api.GPUFaultXid, Xid: int(xid), Time: t}
	if what, fatal := fatalXids[xid]; fatal {
		f.Fatal = true
		f.Reason = fmt.Sprintf("Xid %d: %s", xid, what)
	} else if what, known := otherXids[xid]; known {
		f.Reason = fmt.Sprintf("Xid %d: %s", xid, what)
	} else {
		f.Reason = fmt.Sprintf("Xid %d", xid)
	}
	return f, true
}
