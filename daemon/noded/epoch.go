package noded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sharq-hpc/sharq/internal/atomicfile"
)

// epochFile holds the highest controller epoch the node has seen (its
// state directory's "epoch"). A controller on an etcd cluster sends its
// leader epoch in every message; orders from a lower epoch come from a
// deposed leader and are refused, so a stale leader's late start never
// starts a job. A single controller on bbolt sends epoch 0.
const epochFile = "epoch"

// ErrStaleEpoch: a message came from a controller whose leadership ended.
var ErrStaleEpoch = errors.New("stale controller epoch")

// epochs is the node's highest seen epoch, kept durably.
type epochs struct {
	path string
	mu   sync.Mutex
	max  int64
}

func loadEpochs(dir string) (*epochs, error) {
	e := &epochs{path: filepath.Join(dir, epochFile)}
	b, err := os.ReadFile(e.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return e, nil
	case err != nil:
		return nil, fmt.Errorf("epoch: %w", err)
	}
	if err := json.Unmarshal(b, &e.max); err != nil || e.max < 0 {
		return nil, fmt.Errorf("epoch file %s is corrupt (%q): remove it if no controller of a deposed leader can reach this node", e.path, b)
	}
	return e, nil
}

// observe checks a controller's epoch: lower than the highest seen fails
// with ErrStaleEpoch; higher is stored (synced) before observe returns.
func (e *epochs) observe(epoch int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case epoch < e.max:
		return fmt.Errorf("%w: %d, below %d seen (a newer leader exists; remove %s only if the cluster left etcd)", ErrStaleEpoch, epoch, e.max, e.path)
	case epoch == e.max:
		return nil
	}
	if err := atomicfile.Write(e.path, []byte(fmt.Sprint(epoch)), true); err != nil {
		return fmt.Errorf("epoch: %w", err)
	}
	e.max = epoch
	return nil
}

// check is observe for an order: equal or higher passes, lower fails.
func (e *epochs) check(epoch int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if epoch < e.max {
		return fmt.Errorf("%w: %d, below %d seen", ErrStaleEpoch, epoch, e.max)
	}
	return nil
}
