package noded_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/session"
)

// sessionClient is a session's client end, as qsub -I and qexec speak it.
type sessionClient struct {
	conn   net.Conn
	frames []session.Frame // every frame after Ready, up to and with Exit
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
	return &sessionClient{conn: conn}
}

// run reads the session to its end: Ready first, then every frame to Exit.
func (c *sessionClient) run() error {
	c.conn.SetReadDeadline(time.Now().Add(waitLimit))
	for {
		f, err := session.ReadFrame(c.conn)
		if err != nil {
			return fmt.Errorf("session: %w after %d frames", err, len(c.frames))
		}
		if len(c.frames) == 0 && f.Type != session.TypeReady {
			return fmt.Errorf("session: first frame %d %q, want Ready", f.Type, f.Payload)
		}
		c.frames = append(c.frames, f)
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

// TestLateSessionGetsWalltimeWarning: an interactive job's own session
// that connects after its walltime warning was sent (qsub -I attaching
// late) gets the warning at once, after Ready, with the time then left,
// and then the walltime's stop notice, as a session connected from the
// start does (which gets each once). A session that connects to a job
// being stopped (preempted) past its warning time is not warned of a
// walltime the job will not reach.
func TestLateSessionGetsWalltimeWarning(t *testing.T) {
	e := newEnv(t)
	e.cfg.Cluster.SessionListen = "127.0.0.1:0"
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if p.hello.SessionAddr == "" {
		t.Fatal("the node serves no sessions")
	}
	// The warning is due a tenth before the end: 1.2 s, so that a late
	// session has a second to connect between the warning and the end even
	// on a loaded machine (5 s left it 400 ms, which a loaded CI missed).
	const wall = 12 * time.Second
	o := e.order(t, "130.t", "")
	o.Job.Interactive = true
	o.Walltime, o.Grace = wall, time.Second
	preempted := e.order(t, "131.t", "trap '' TERM\nwhile :; do sleep 0.1; done\n")
	preempted.Walltime = wall
	p.start(t, o)
	p.start(t, preempted)
	started := p.state(t, o.Job.ID, "running").Time
	p.state(t, preempted.Job.ID, "running")
	var sessions sync.WaitGroup
	runSession := func(c *sessionClient) {
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			if err := c.run(); err != nil {
				t.Error(err)
			}
		}()
	}
	early := openSession(t, p, o.Job.ID, o.Run, false, "sleep", "60")
	runSession(early)

	// Connect once the warning is due, well before the walltime ends.
	time.Sleep(time.Until(started.Add(wall - wall/10 + 100*time.Millisecond)))
	late := openSession(t, p, o.Job.ID, o.Run, true, "sleep", "60")
	runSession(late)
	// The other job is preempted (it ignores SIGTERM: killed after its
	// grace), and a session connects once the stop is recorded.
	p.stop(t, preempted.Job.ID, 3*time.Second, "preempted")
	record := filepath.Join(e.stateDir("n1"), "jobs", preempted.Job.ID, "state.json")
	for deadline := time.Now().Add(waitLimit); !strings.Contains(readFile(t, record), `"stop_reason":"preempted"`); {
		if time.Now().After(deadline) {
			t.Fatal("the stop was never recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopping := openSession(t, p, preempted.Job.ID, preempted.Run, false, "sleep", "60")
	runSession(stopping)
	sessions.Wait()

	warning := regexp.MustCompile(`^job 130\.t reaches its walltime \(12s\) in (\S+): it is stopped then$`)
	for _, c := range []struct {
		name string
		s    *sessionClient
	}{{"early", early}, {"late", late}} {
		ns := c.s.notices()
		if len(ns) != 2 || !warning.MatchString(ns[0]) || !strings.Contains(ns[1], "has used up its walltime (12s)") {
			t.Errorf("%s session's notices %q, want the walltime warning, then its stop", c.name, ns)
			continue
		}
		if d, err := time.ParseDuration(warning.FindStringSubmatch(ns[0])[1]); err != nil || d <= 0 || d > wall/10 {
			t.Errorf("%s session: warning %q, want at most the %v ahead", c.name, ns[0], wall/10)
		}
	}
	if ns := stopping.notices(); len(ns) != 0 {
		t.Errorf("a session of the preempted job was told %q, want nothing", ns)
	}
	if ex := p.state(t, o.Job.ID, "exited"); ex.Error != "walltime exceeded" {
		t.Errorf("exit %+v, want walltime exceeded", ex)
	}
	if ex := p.state(t, preempted.Job.ID, "exited"); ex.ExitStatus != 256+9 {
		t.Errorf("preempted job's exit %+v, want 265 (SIGKILL after its grace)", ex)
	}
}
