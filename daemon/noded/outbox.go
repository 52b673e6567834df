package noded

import (
	"sync"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime"
)

// outbox holds job state reports until a connection has written them: a
// report made while the controller is unreachable is sent after the next
// welcome.
type outbox struct {
	mu     sync.Mutex
	msgs   []api.JobStateMsg
	notify chan struct{} // one pending wake-up for the writer
}

func newOutbox() *outbox { return &outbox{notify: make(chan struct{}, 1)} }

func (o *outbox) push(m api.JobStateMsg) {
	o.mu.Lock()
	o.msgs = append(o.msgs, m)
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// peek returns the oldest report without removing it.
func (o *outbox) peek() (api.JobStateMsg, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.msgs) == 0 {
		return api.JobStateMsg{}, false
	}
	return o.msgs[0], true
}

// pop removes the oldest report, once it is written.
func (o *outbox) pop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.msgs) > 0 {
		o.msgs[0] = api.JobStateMsg{}
		o.msgs = o.msgs[1:]
	}
}

// supersede drops the reports a hello listing tasks already carries: that a
// listed run is running, and a plain exit with the status the hello gives.
// Failures to start and exits with an error text (walltime exceeded) stay:
// the hello cannot say them.
func (o *outbox) supersede(tasks []runtime.Task) {
	type key struct {
		id  string
		run int
	}
	listed := make(map[key]runtime.Task, len(tasks))
	for _, t := range tasks {
		listed[key{t.JobID, t.Run}] = t
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := o.msgs[:0]
	for _, m := range o.msgs {
		t, ok := listed[key{m.JobID, m.Run}]
		switch {
		case ok && m.State == stateRunning:
			continue
		case ok && m.State == stateExited && !t.Running && t.ExitStatus == m.ExitStatus && m.Error == "":
			continue
		}
		kept = append(kept, m)
	}
	clear(o.msgs[len(kept):])
	o.msgs = kept
}
