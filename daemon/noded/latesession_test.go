//go:build !unit

package noded_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/session"
)

// sessionClient is a session's client end, as qsub -I and qexec speak it.
type sessionClient struct {
	conn    net.Conn
	frames  []session.Frame // from Ready on, up to and with Exit
	refusal string          // the Refused frame's text, when it was refused
	// noticed gets the first notice's text as run reads it, so that a
	// test waits for the notice itself rather than for the time it is due.
	noticed chan string
}

// openSession grants a token for job's run (as the controller does with
// MsgSession), dials the node's session port and says hello with it.
func openSession(t *testing.T, p *peer, job string, run int, primary bool, cmd ...string) *sessionClient {
	t.Helper()
	b := make([]byte, session.TokenLen/2)
	rand.Read(b)
	token := hex.EncodeToString(b)
	p.send(t, api.NodeMsg{Type: api.MsgSession, Session: &api.SessionOrder{Token: token, JobID: job, Run: run, UID: 1000,
		Command: cmd, Primary: primary, Expires: time.Now().Add(time.Minute)}})
	conn, err := net.Dial("tcp", p.hello.SessionAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := session.NewWriter(conn).JSON(session.TypeHello, session.Hello{V: session.Version, Token: token}); err != nil {
		t.Fatal(err)
	}
	return &sessionClient{conn: conn, noticed: make(chan string, 1)}
}

// ready reads the answer to the hello: Ready (the session is registered
// for the job's notices by then), or Refused, kept in c.refusal.
func (c *sessionClient) ready() error {
	c.conn.SetReadDeadline(time.Now().Add(waitLimit))
	f, err := session.ReadFrame(c.conn)
	switch {
	case err != nil:
		return fmt.Errorf("session: %w before Ready", err)
	case f.Type == session.TypeRefused:
		c.refusal = string(f.Payload)
		return nil
	case f.Type != session.TypeReady:
		return fmt.Errorf("session: first frame %d %q, want Ready", f.Type, f.Payload)
	}
	c.frames = append(c.frames, f)
	return nil
}

// run reads the session to its end: Ready (unless read already), then
// every frame to Exit.
func (c *sessionClient) run() error {
	if len(c.frames) == 0 {
		if err := c.ready(); err != nil {
			return err
		}
		if c.refusal != "" {
			return fmt.Errorf("session refused: %s", c.refusal)
		}
	}
	c.conn.SetReadDeadline(time.Now().Add(waitLimit))
	for {
		f, err := session.ReadFrame(c.conn)
		if err != nil {
			return fmt.Errorf("session: %w after %d frames", err, len(c.frames))
		}
		c.frames = append(c.frames, f)
		if f.Type == session.TypeNotice {
			select {
			case c.noticed <- string(f.Payload):
			default: // not the first
			}
		}
		if f.Type == session.TypeExit {
			return nil
		}
	}
}

// notices are the notice frames' texts.
func (c *sessionClient) notices() []string {
	var out []string
	for _, f := range c.frames {
		if f.Type == session.TypeNotice {
			out = append(out, string(f.Payload))
		}
	}
	return out
}

// exit is the Exit frame's reason (its status is the session process's:
// SIGTERM or SIGKILL, as the stop reached it).
func (c *sessionClient) exit() string {
	for _, f := range c.frames {
		if f.Type == session.TypeExit {
			var e session.Exit
			if err := session.Decode(f, &e); err != nil {
				return err.Error()
			}
			return e.Reason
		}
	}
	return "(no exit)"
}

// TestLateSessionGetsNotices: a session that connects after a job's run
// was told something (a qsub -I attaching late, a qexec) gets every notice
// a session connected from the start got, the same text, in order, once,
// then the same exit: a stop (qdel, preemption, a failed part, the
// walltime's end) that came before it, and the walltime warning before
// that. The one difference: a warning that is still the run's last word
// says the time left when the late session connects. A session whose job
// has ended is refused with the reason.
func TestLateSessionGetsNotices(t *testing.T) {
	e := newEnv(t)
	e.cfg.Cluster.SessionListen = "127.0.0.1:0"
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if p.hello.SessionAddr == "" {
		t.Fatal("the node serves no sessions")
	}
	// A batch job that outlives SIGTERM, so a late session can connect
	// during the stop's grace; an interactive job's holder (the container's
	// first process, without a TERM handler) does too.
	const ignoreTERM = "trap '' TERM\nwhile :; do sleep 0.1; done\n"
	// A walltime whose warning (a tenth before the end) leaves a loaded
	// machine a second to act between the warning and the end.
	const wall = 12 * time.Second
	const warning = "reaches its walltime (12s) in 1s: it is stopped then"
	cases := []struct {
		name        string
		interactive bool          // the late session is the job's own (qsub -I)
		walltime    time.Duration // 0: none
		afterWarn   bool          // the event waits for the walltime warning
		stop        api.StopReason
		grace       time.Duration // of the stop, or of the walltime's end
		refreshed   bool          // the late session's warning says the time left then
		ended       bool          // the late session connects after the job's exit
		want        []string      // the early session's notices
		wantExit    string        // the early session's exit reason
	}{
		{name: "preemption", stop: api.StopPreempted, grace: 3 * time.Second,
			want:     []string{"the job was preempted: it is stopped now (SIGTERM, then SIGKILL after 3s)"},
			wantExit: "the job was preempted"},
		{name: "another part failed", stop: api.StopFailed, grace: 3 * time.Second,
			want:     []string{"another node's part of the job failed: it is stopped now (SIGTERM, then SIGKILL after 3s)"},
			wantExit: "another node's part of the job failed"},
		{name: "preemption after the walltime warning", walltime: wall, afterWarn: true, stop: api.StopPreempted, grace: 3 * time.Second,
			want:     []string{"job 142.t " + warning, "the job was preempted: it is stopped now (SIGTERM, then SIGKILL after 3s)"},
			wantExit: "the job was preempted"},
		{name: "the walltime's end", walltime: wall, grace: 3 * time.Second,
			want:     []string{"job 143.t " + warning, "job 143.t has used up its walltime (12s): it is stopped now (SIGTERM, then SIGKILL after 3s)"},
			wantExit: "the job used up its walltime"},
		{name: "interactive, after the warning, before the end", interactive: true, walltime: wall, afterWarn: true, grace: time.Second, refreshed: true,
			want:     []string{"job 144.t " + warning, "job 144.t has used up its walltime (12s): it is stopped now (SIGTERM, then SIGKILL after 1s)"},
			wantExit: "the job used up its walltime"},
		// An interactive job's holder ends at SIGTERM: its qsub -I that
		// connects after a stop is refused, with the reason.
		{name: "qdel of an interactive job, then its exit", interactive: true, stop: api.StopDeleted, grace: 3 * time.Second, ended: true,
			want:     []string{"the job was deleted (qdel): it is stopped now (SIGTERM, then SIGKILL after 3s)"},
			wantExit: "the job was deleted (qdel)"},
		{name: "qdel, then the exit", stop: api.StopDeleted, ended: true,
			want:     []string{"the job was deleted (qdel): it is stopped now (SIGTERM, then SIGKILL after 0s)"},
			wantExit: "the job was deleted (qdel)"},
	}
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			id := fmt.Sprintf("%d.t", 140+i)
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				o := e.order(t, id, ignoreTERM)
				o.Job.Interactive = c.interactive
				o.Walltime, o.Grace = c.walltime, c.grace
				p.start(t, o)
				p.state(t, id, "running")
				// Registered once it has Ready.
				early := openSession(t, p, id, o.Run, false, "sleep", "60")
				if err := early.ready(); err != nil || early.refusal != "" {
					t.Fatalf("early session: %v %s", err, early.refusal)
				}
				earlyDone := make(chan error, 1)
				go func() { earlyDone <- early.run() }()
				if c.afterWarn {
					// The warning itself, as the early session reads it.
					select {
					case n := <-early.noticed:
						if n != c.want[0] {
							t.Fatalf("early session: first notice %q, want the warning %q", n, c.want[0])
						}
					case <-time.After(wall + waitLimit):
						t.Fatal("early session: no walltime warning")
					}
				}
				if c.stop != "" {
					p.stop(t, id, c.grace, c.stop)
				}
				switch {
				case c.ended:
					p.state(t, id, "exited")
				case c.stop != "" || !c.afterWarn:
					// Connect once the stop is recorded (the walltime's own, without an order).
					record := filepath.Join(e.stateDir("n1"), "jobs", id, "state.json")
					for deadline := time.Now().Add(waitLimit); !strings.Contains(readFile(t, record), `"stop_reason":"`); {
						if time.Now().After(deadline) {
							t.Fatal("the stop was never recorded")
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
				late := openSession(t, p, id, o.Run, c.interactive, "sleep", "60")
				lateErr := late.run()
				if err := <-earlyDone; err != nil {
					t.Fatalf("early session: %v", err)
				}
				want := c.want
				if got := early.notices(); !slices.Equal(got, want) || early.exit() != c.wantExit {
					t.Errorf("early session: notices %q exit %q, want %q and %q", got, early.exit(), want, c.wantExit)
				}
				if c.ended {
					if wantRefusal := "job " + id + " has ended: " + c.wantExit; lateErr == nil || late.refusal != wantRefusal {
						t.Errorf("late session: %v, refusal %q, want %q", lateErr, late.refusal, wantRefusal)
					}
					return
				}
				if lateErr != nil {
					t.Fatalf("late session: %v", lateErr)
				}
				got := late.notices()
				if c.refreshed && len(got) == len(want) {
					// The warning with the time left then: at most the lead.
					re := regexp.MustCompile(`^job ` + regexp.QuoteMeta(id) + ` reaches its walltime \(12s\) in (\S+): it is stopped then$`)
					if m := re.FindStringSubmatch(got[0]); m != nil {
						if d, err := time.ParseDuration(m[1]); err == nil && d > 0 && d <= wall/10 {
							got[0] = want[0]
						}
					}
				}
				if !slices.Equal(got, want) || late.exit() != c.wantExit {
					t.Errorf("late session: notices %q exit %q, want %q and %q, as the early one", late.notices(), late.exit(), want, c.wantExit)
				}
			})
		}
	})
	for i, c := range cases {
		id := fmt.Sprintf("%d.t", 140+i)
		ex := p.state(t, id, "exited")
		if c.walltime > 0 && c.stop == "" && ex.Error != "walltime exceeded" {
			t.Errorf("%s: exit %+v, want walltime exceeded", c.name, ex)
		}
	}
}
