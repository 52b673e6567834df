package noded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/atomicfile"
)

// The job lease. A node may run its jobs only while its lease lasts; the
// controller renews it by acknowledging the node's own messages: the hello
// and every heartbeat carry a sequence number (api.NodeMsg.Seq), the
// controller's welcome and heartbeats echo the highest one it has received
// (Ack) with the lease it grants (Lease), and the lease then runs from the
// instant the node *sent* the acknowledged message. That instant comes
// before the controller's receipt of it, so whichever direction of the link
// fails, the node's lease ends no later than the controller's last receipt
// from the node plus the lease: the controller, which requeues a silent
// node's jobs only after that (plus a margin), never starts a job elsewhere
// while this node may still run it. A fence grace before the end the node
// sends its jobs SIGTERM; at the end SIGKILL (supervisor.fence).
//
// Instants are CLOCK_BOOTTIME (it counts suspended time too, and does not
// jump with the wall clock); the last renewal is kept in the state
// directory's "lease" file, so that a restarted sharqd that cannot reach
// the controller does not extend it (containers outlive sharqd; a reboot
// ends both them and the clock, so the file need not be synced).

// leaseFile is the last renewal, in the node's state directory.
const leaseFile = "lease"

// maxUnacked bounds the messages kept for a later acknowledgement; older
// ones are forgotten (an acknowledgement of one only renews less).
const maxUnacked = 64

// fenceGrace is how long before its lease ends the node sends its jobs
// SIGTERM: a quarter of the lease, at most 10 s (a checkpoint's worth;
// the controller waits for the end of the lease, not for the job).
func fenceGrace(lease time.Duration) time.Duration { return min(10*time.Second, lease/4) }

// leaseRecord is the lease file: the renewal instant and the lease, both
// in nanoseconds (the instant on CLOCK_BOOTTIME).
type leaseRecord struct {
	Renewed time.Duration `json:"renewed_boottime_ns"`
	Lease   time.Duration `json:"lease_ns"`
}

// sentMsg is one message waiting for its acknowledgement.
type sentMsg struct {
	seq uint64
	at  time.Duration
}

// lease is the node's job lease: a small state machine on an injected
// clock (now: CLOCK_BOOTTIME in the daemon). Safe for concurrent use.
type lease struct {
	now func() time.Duration

	mu sync.Mutex
	// held: a lease exists (granted, or restored from the file); without
	// one nothing is fenced.
	held    bool
	renewed time.Duration // the instant the lease runs from
	dur     time.Duration
	seq     uint64    // the last number sent
	unacked []sentMsg // this connection's messages, oldest first
}

func newLease(now func() time.Duration) *lease { return &lease{now: now} }

// restore sets the lease a starting daemon holds: the file's (rec) when it
// is from this boot; without one, a node that adopted running jobs
// (running) cannot know how long ago its lease was last renewed, so it
// gives itself one fence grace of def to reach the controller before it
// begins to fence them (the safe side: an older sharqd wrote no file, and
// its jobs may already run elsewhere). A node with no running job holds no
// lease until the controller grants one.
func (l *lease) restore(rec *leaseRecord, running bool, def time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	switch {
	case rec != nil && rec.Lease > 0 && rec.Renewed >= 0 && rec.Renewed <= now:
		l.held, l.renewed, l.dur = true, rec.Renewed, min(rec.Lease, conf.MaxJobLease)
	case running && def > 0:
		l.held, l.dur = true, def
		l.renewed = now - def + 2*fenceGrace(def)
	default:
		l.held = false
	}
}

// connect starts a connection: messages of the last one are no longer
// acknowledged.
func (l *lease) connect() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unacked = l.unacked[:0]
}

// send numbers a message that asks for a renewal, sent now.
func (l *lease) send() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if len(l.unacked) == maxUnacked {
		l.unacked = append(l.unacked[:0], l.unacked[1:]...)
	}
	l.unacked = append(l.unacked, sentMsg{seq: l.seq, at: l.now()})
	return l.seq
}

// ack takes the controller's acknowledgement of message seq with the lease
// it grants (bounded by conf.MaxJobLease). It renews the lease from that
// message's send instant and returns the renewal to keep, or nil when it
// renews nothing (an unknown or older number, or no lease granted).
func (l *lease) ack(seq uint64, grant time.Duration) *leaseRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq == 0 || grant <= 0 {
		return nil
	}
	i := 0
	for i < len(l.unacked) && l.unacked[i].seq < seq {
		i++
	}
	if i == len(l.unacked) || l.unacked[i].seq != seq {
		return nil
	}
	at := l.unacked[i].at
	l.unacked = append(l.unacked[:0], l.unacked[i+1:]...)
	if l.held && at < l.renewed {
		return nil
	}
	l.held, l.renewed, l.dur = true, at, min(grant, conf.MaxJobLease)
	return &leaseRecord{Renewed: l.renewed, Lease: l.dur}
}

// drop gives the lease up: the controller grants none (it predates
// leases), so nothing is fenced.
func (l *lease) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
}

// leaseState is the lease at one instant.
type leaseState struct {
	held bool
	// fence is when the node sends its jobs SIGTERM, end when it kills
	// them (clock instants; zero unless held).
	fence, end time.Duration
	now        time.Duration
}

// due reports whether the jobs must be stopping now.
func (s leaseState) due() bool { return s.held && s.now >= s.fence }

// state is the lease now.
func (l *lease) state() leaseState {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.held {
		return leaseState{now: now}
	}
	end := l.renewed + l.dur
	return leaseState{held: true, fence: end - fenceGrace(l.dur), end: end, now: now}
}

// bootTime is CLOCK_BOOTTIME, the lease's clock.
func bootTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic(fmt.Sprintf("CLOCK_BOOTTIME: %v", err)) // Linux has had it since 2.6.39
	}
	return time.Duration(ts.Nano())
}

// loadLease reads the lease file of dir; nil when there is none.
func loadLease(dir string) (*leaseRecord, error) {
	path := filepath.Join(dir, leaseFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	var r leaseRecord
	if len(b) > 256 || json.Unmarshal(b, &r) != nil {
		// Half written it cannot be (atomicfile); treated as none, which
		// fences adopted jobs unless the controller answers soon.
		return nil, nil
	}
	return &r, nil
}

// saveLease writes r to dir's lease file, not synced (see above).
func saveLease(dir string, r *leaseRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, leaseFile), b, false); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	return nil
}
