package noded

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// A start order for a GPU with a fault the controller had not read yet is
// refused. The controller fences a GPU once it reads the fault in a hello
// or heartbeat (daemon/ctld/gpuhealth.go); between the fault and then it
// may still place a job there. sharqd knows which of its messages the
// controller has read (its acknowledgements, lease.go), so it refuses a
// start on a GPU whose fault no acknowledged message carried, as a failure
// of the node (NodeFault, GPUFault): the controller requeues the job
// uncounted, without counting it against the node's runtime either, and
// places it elsewhere once it has fenced the GPU. A fault the controller
// has read is its to judge: a start it orders on that GPU after all (an
// admin cleared the fault) goes ahead. Without acknowledgements (a
// controller older than job leases) nothing is refused. A start the
// supervisor takes up just after the acknowledgement came may still run on
// the GPU; the controller then stops it for a fatal fault as for any job
// running there.

// faultKey names one fault: its GPU, kind and time.
type faultKey struct {
	index int
	kind  api.GPUFaultKind
	at    int64
}

// gpuFaultAcks tracks which faults the controller has read.
type gpuFaultAcks struct {
	mu    sync.Mutex
	first map[faultKey]uint64 // the Seq of the first message that carried each fault
	last  uint64              // the highest Seq sent
	acked uint64              // the highest Seq the controller acknowledged
}

// sent records that the message numbered seq carries fs (every fault the
// node has, so those not in it are gone and forgotten).
func (a *gpuFaultAcks) sent(seq uint64, fs []api.GPUFault) {
	if seq == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = max(a.last, seq)
	keep := make(map[faultKey]uint64, len(fs))
	for _, f := range fs {
		k := faultKey{f.Index, f.Kind, f.Time.UnixNano()}
		if s, ok := a.first[k]; ok {
			keep[k] = s
		} else {
			keep[k] = seq
		}
	}
	a.first = keep
}

// ack takes the controller's acknowledgement of the message numbered seq
// (and every earlier one); a number never sent is ignored.
func (a *gpuFaultAcks) ack(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if seq <= a.last {
		a.acked = max(a.acked, seq)
	}
}

// unread says whether the controller has not read f yet.
func (a *gpuFaultAcks) unread(f api.GPUFault) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acked == 0 {
		return false // no acknowledgements: nothing to go by
	}
	s, ok := a.first[faultKey{f.Index, f.Kind, f.Time.UnixNano()}]
	return !ok || s > a.acked
}

// faultedGPU is why a start on gpus is refused: one of them has a fault
// the controller has not read; "" when none has.
func (s *supervisor) faultedGPU(gpus []int) string {
	if s.gpuHealth == nil {
		return ""
	}
	for _, f := range s.gpuHealth.Faults() {
		if slices.Contains(gpus, f.Index) && s.faultAcks.unread(f) {
			return fmt.Sprintf("GPU %d of %s is unhealthy (%s since %s): fenced", f.Index, s.node, f.Reason, f.Time.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

// failGPU reports a run refused for a faulted GPU: the node's failure,
// not its runtime's.
func (s *supervisor) failGPU(id string, run int, why string) {
	s.log.Error("job not started: a GPU of it is unhealthy", "job", id, "run", run, "why", why)
	s.out.push(api.JobStateMsg{JobID: id, Run: run, State: stateFailed, ExitStatus: ExitUnknown, Error: why, NodeFault: true, GPUFault: true, Time: time.Now()})
}
