package noded

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/conf"
)

// leaseStep is one thing that happens to a lease at a clock instant (in
// seconds): a message sent, an acknowledgement, a new connection, or a
// look at the state.
type leaseStep struct {
	at   float64
	do   string // "send", "ack", "connect", "drop", "check"
	seq  uint64 // ack: the number acknowledged; send: the number it must get
	dur  time.Duration
	want leaseWant // check
	// renews (ack): whether the acknowledgement renews the lease.
	renews bool
}

type leaseWant struct {
	held       bool
	due        bool
	fence, end float64 // seconds, when held
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func TestLease(t *testing.T) {
	const L = 60 * time.Second // fence grace 10 s
	cases := []struct {
		name    string
		restore *leaseRecord
		running bool
		steps   []leaseStep
	}{
		{name: "no lease before the first acknowledgement", steps: []leaseStep{
			{at: 1, do: "send", seq: 1},
			{at: 100, do: "check", want: leaseWant{}},
		}},
		{name: "the lease runs from the acknowledged message's send instant", steps: []leaseStep{
			{at: 10, do: "send", seq: 1},
			{at: 15, do: "ack", seq: 1, dur: L, renews: true},
			{at: 59.9, do: "check", want: leaseWant{held: true, fence: 60, end: 70}},
			{at: 60, do: "check", want: leaseWant{held: true, due: true, fence: 60, end: 70}},
		}},
		{name: "heartbeats acknowledged in turn keep it going", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0.1, do: "ack", seq: 1, dur: L, renews: true},
			{at: 5, do: "send", seq: 2},
			{at: 5.1, do: "ack", seq: 2, dur: L, renews: true},
			{at: 10, do: "send", seq: 3},
			{at: 10.1, do: "ack", seq: 3, dur: L, renews: true},
			{at: 59, do: "check", want: leaseWant{held: true, fence: 60, end: 70}},
		}},
		{name: "controller to node lost: no acknowledgement, the lease runs out", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0.1, do: "ack", seq: 1, dur: L, renews: true},
			{at: 5, do: "send", seq: 2},
			{at: 10, do: "send", seq: 3},
			{at: 50, do: "send", seq: 4},
			{at: 50, do: "check", want: leaseWant{held: true, due: true, fence: 50, end: 60}},
		}},
		{name: "node to controller lost: the controller echoes the last one it got, which renews nothing more", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0.1, do: "ack", seq: 1, dur: L, renews: true},
			{at: 5, do: "send", seq: 2}, // lost on the way
			{at: 5.1, do: "ack", seq: 1, dur: L},
			{at: 10, do: "send", seq: 3}, // lost
			{at: 10.1, do: "ack", seq: 1, dur: L},
			{at: 55, do: "check", want: leaseWant{held: true, due: true, fence: 50, end: 60}},
		}},
		{name: "a late acknowledgement renews from its own message, not from its arrival", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 30, do: "ack", seq: 1, dur: L, renews: true},
			{at: 30, do: "check", want: leaseWant{held: true, fence: 50, end: 60}},
		}},
		{name: "an older acknowledgement after a newer one renews nothing", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 5, do: "send", seq: 2},
			{at: 5.1, do: "ack", seq: 2, dur: L, renews: true},
			{at: 5.2, do: "ack", seq: 1, dur: L},
			{at: 6, do: "check", want: leaseWant{held: true, fence: 55, end: 65}},
		}},
		{name: "an acknowledgement of a number never sent renews nothing", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 1, do: "ack", seq: 7, dur: L},
			{at: 1, do: "ack", seq: 0, dur: L},
			{at: 2, do: "check", want: leaseWant{}},
		}},
		{name: "a new connection forgets the messages of the last one", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 1, do: "connect"},
			{at: 2, do: "send", seq: 2},
			{at: 3, do: "ack", seq: 1, dur: L},
			{at: 3, do: "check", want: leaseWant{}},
			{at: 3, do: "ack", seq: 2, dur: L, renews: true},
			{at: 3, do: "check", want: leaseWant{held: true, fence: 52, end: 62}},
		}},
		{name: "no lease granted (an older controller): nothing renews, nothing is fenced", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0.1, do: "ack", seq: 1, dur: 0},
			{at: 1000, do: "check", want: leaseWant{}},
		}},
		{name: "dropped when the controller grants none", running: true, steps: []leaseStep{
			{at: 0, do: "drop"},
			{at: 1000, do: "check", want: leaseWant{}},
		}},
		{name: "the grant is bounded", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0, do: "ack", seq: 1, dur: 1000 * time.Hour, renews: true},
			{at: 0, do: "check", want: leaseWant{held: true, fence: (conf.MaxJobLease - 10*time.Second).Seconds(), end: conf.MaxJobLease.Seconds()}},
		}},
		{name: "a short lease fences a quarter of it before its end", steps: []leaseStep{
			{at: 0, do: "send", seq: 1},
			{at: 0, do: "ack", seq: 1, dur: 8 * time.Second, renews: true},
			{at: 6, do: "check", want: leaseWant{held: true, due: true, fence: 6, end: 8}},
		}},
		{name: "restart: the kept renewal stands, the daemon's start does not extend it",
			restore: &leaseRecord{Renewed: secs(-20), Lease: L}, running: true, steps: []leaseStep{
				{at: 0, do: "check", want: leaseWant{held: true, fence: 30, end: 40}},
				{at: 35, do: "check", want: leaseWant{held: true, due: true, fence: 30, end: 40}},
			}},
		{name: "restart: a kept lease already over is due at once",
			restore: &leaseRecord{Renewed: secs(-100), Lease: L}, running: true, steps: []leaseStep{
				{at: 0, do: "check", want: leaseWant{held: true, due: true, fence: -50, end: -40}},
			}},
		{name: "restart: the controller renews the kept lease",
			restore: &leaseRecord{Renewed: secs(-20), Lease: L}, running: true, steps: []leaseStep{
				{at: 0, do: "send", seq: 1},
				{at: 0.5, do: "ack", seq: 1, dur: L, renews: true},
				{at: 1, do: "check", want: leaseWant{held: true, fence: 50, end: 60}},
			}},
		{name: "restart: a renewal from after now is from before a reboot and not held",
			restore: &leaseRecord{Renewed: secs(5000), Lease: L}, steps: []leaseStep{
				{at: 0, do: "check", want: leaseWant{}},
			}},
		{name: "restart without a file but with running jobs: one fence grace to reach the controller",
			running: true, steps: []leaseStep{
				{at: 0, do: "check", want: leaseWant{held: true, fence: 10, end: 20}},
				{at: 10, do: "check", want: leaseWant{held: true, due: true, fence: 10, end: 20}},
			}},
		{name: "restart without a file and without jobs: no lease",
			steps: []leaseStep{
				{at: 0, do: "check", want: leaseWant{}},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The clock starts at 100 s; steps are relative to it.
			const base = 100 * time.Second
			var now time.Duration
			l := newLease(func() time.Duration { return base + now })
			var rec *leaseRecord
			if c.restore != nil {
				r := *c.restore
				r.Renewed += base // relative to the clock's start too
				rec = &r
			}
			l.restore(rec, c.running, 2*L)
			for i, s := range c.steps {
				now = secs(s.at)
				switch s.do {
				case "send":
					if got := l.send(); got != s.seq {
						t.Fatalf("step %d: send numbered %d, want %d", i, got, s.seq)
					}
				case "ack":
					r := l.ack(s.seq, s.dur)
					if (r != nil) != s.renews {
						t.Fatalf("step %d: ack %d renewed %v, want %v", i, s.seq, r != nil, s.renews)
					}
					if r != nil && (r.Renewed > base+now || r.Lease <= 0) {
						t.Fatalf("step %d: renewal %+v at %v", i, r, base+now)
					}
				case "connect":
					l.connect()
				case "drop":
					l.drop()
				case "check":
					st := l.state()
					got := leaseWant{held: st.held, due: st.due()}
					if st.held {
						got.fence, got.end = (st.fence - base).Seconds(), (st.end - base).Seconds()
					}
					if got != s.want {
						t.Fatalf("step %d at %vs: lease %+v, want %+v", i, s.at, got, s.want)
					}
				default:
					t.Fatalf("step %d: unknown %q", i, s.do)
				}
			}
		})
	}
}

func TestLeaseUnackedBound(t *testing.T) {
	var now time.Duration
	l := newLease(func() time.Duration { return now })
	for i := range maxUnacked + 1 {
		now = time.Duration(i) * time.Second
		l.send()
	}
	if r := l.ack(1, time.Minute); r != nil {
		t.Errorf("the oldest message, beyond the bound, renewed the lease: %+v", r)
	}
	if r := l.ack(maxUnacked+1, time.Minute); r == nil || r.Renewed != maxUnacked*time.Second {
		t.Errorf("the newest message renewed %+v, want from %v", r, maxUnacked*time.Second)
	}
}

func TestLeaseFile(t *testing.T) {
	dir := t.TempDir()
	if r, err := loadLease(dir); r != nil || err != nil {
		t.Fatalf("no file: %+v %v", r, err)
	}
	want := leaseRecord{Renewed: 12345 * time.Second, Lease: 2 * time.Minute}
	if err := saveLease(dir, &want); err != nil {
		t.Fatal(err)
	}
	r, err := loadLease(dir)
	if err != nil || r == nil || *r != want {
		t.Fatalf("read back %+v %v, want %+v", r, err, want)
	}
	for _, bad := range []string{"", "{", `"x"`, string(make([]byte, 300))} {
		if err := os.WriteFile(filepath.Join(dir, leaseFile), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if r, err := loadLease(dir); r != nil || err != nil {
			t.Errorf("file %.10q: %+v %v, want none", bad, r, err)
		}
	}
}

func TestBootTimeAdvances(t *testing.T) {
	a := bootTime()
	b := bootTime()
	if a <= 0 || b < a {
		t.Fatalf("CLOCK_BOOTTIME read %v then %v", a, b)
	}
}

// FuzzLeaseFile: whatever the lease file holds, loadLease gives a record
// or none, and the lease restored from it never ends later than its
// bound after now.
func FuzzLeaseFile(f *testing.F) {
	for _, s := range []string{`{"renewed_boottime_ns":1000,"lease_ns":120000000000}`, `{"renewed_boottime_ns":-5,"lease_ns":1}`,
		`{"lease_ns":9223372036854775807}`, `{`, ``, `null`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, leaseFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := loadLease(dir)
		if err != nil {
			t.Fatalf("loadLease: %v", err)
		}
		const now = 1000 * time.Second
		l := newLease(func() time.Duration { return now })
		l.restore(r, true, time.Minute)
		if st := l.state(); st.held && (st.end > now+conf.MaxJobLease || st.fence > st.end) {
			t.Fatalf("file %q: lease %+v", b, st)
		}
	})
}
