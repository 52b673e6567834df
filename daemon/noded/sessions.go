package noded

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/conns"
	"github.com/sharq-hpc/sharq/internal/lograte"
	"github.com/sharq-hpc/sharq/internal/munge"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/session"
)

// Session limits and waits.
const (
	// maxTokens bounds the tokens a node holds (the controller sends one
	// per session request; unused ones expire).
	maxTokens = 1024
	// maxPending bounds the session connections of a node that have not
	// shown a session's token yet, and maxPendingPerAddr those of one
	// address: a new connection over either closes the oldest one still
	// silent (conns.Pending) rather than being refused, so no host holding
	// idle connections (anyone who can reach the port, not only the
	// cluster's users) keeps another from its session.
	maxPending        = 128
	maxPendingPerAddr = 16
	// maxSessionsPerUser bounds the sessions of one uid on a node at
	// once, and maxSessions those of all: one user's sessions cannot take
	// every other user's.
	maxSessionsPerUser = 64
	maxSessions        = 1024
	// helloWait bounds the wait for a client's Hello.
	helloWait = 10 * time.Second
	// tokenWait is how long a Hello waits for its token, which the
	// controller sends to the node as it answers the client.
	tokenWait = 3 * time.Second
	// jobWait is how long a session waits for its job's container (the
	// controller grants sessions once it has ordered the start).
	jobWait = 2 * time.Minute
	// hangupGrace is how long a session's process has between SIGHUP (its
	// client went away) and SIGKILL.
	hangupGrace = 5 * time.Second
	// primaryWait is how long an interactive job waits for its own
	// session to connect before it ends.
	primaryWait = 2 * time.Minute
)

// sessions serves a node's session port: the controller announces each
// session with a one-time token (MsgSession); a client that presents it
// (and, where the token was given to a MUNGE-authenticated client, a
// MUNGE credential of the same uid binding it) gets a process in the job's
// container, over session frames.
type sessions struct {
	sup   *supervisor
	exec  runtime.Execer
	munge string // munged's socket, for credentials
	log   *slog.Logger
	// logs bounds the lines connections that showed no token make
	// sharqd write (lograte).
	logs *lograte.Limiter
	wait time.Duration // tokenWait

	mu        sync.Mutex
	tokens    map[string]*api.SessionOrder
	used      map[string]time.Time // tokens presented, until they expire
	granted   chan struct{}        // closed (and replaced) when a token arrives
	live      map[string]map[*liveSession]bool
	primary   map[string]bool        // jobs whose own session has connected (once)
	told      map[string]*runNotices // what each job's run was told (notices.go)
	pending   *conns.Pending         // per remote address: connections without a token yet
	perUser   *conns.Limiter         // per uid: sessions past their token
	all       *conns.Limiter         // key "on this node": every session past its token
	helloWait time.Duration          // helloWait
}

func newSessions(sup *supervisor, ex runtime.Execer, mungeSocket string, log *slog.Logger) *sessions {
	return &sessions{sup: sup, exec: ex, munge: mungeSocket, log: log, wait: tokenWait,
		logs:   lograte.New(lograte.DefaultBurst, lograte.DefaultWindow, nil),
		tokens: map[string]*api.SessionOrder{}, used: map[string]time.Time{}, granted: make(chan struct{}),
		live: map[string]map[*liveSession]bool{}, primary: map[string]bool{}, told: map[string]*runNotices{},
		pending:   conns.NewPending("session connections without a token", maxPendingPerAddr, maxPending),
		perUser:   conns.NewLimiter("sessions of uid", maxSessionsPerUser),
		all:       conns.NewLimiter("sessions", maxSessions),
		helloWait: helloWait}
}

// grant records a token the controller sent.
func (s *sessions) grant(o *api.SessionOrder) {
	if len(o.Token) != session.TokenLen || checkJobID(o.JobID) != nil {
		s.log.Warn("malformed session order", "job", o.JobID)
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, x := range s.tokens {
		if now.After(x.Expires) {
			delete(s.tokens, t)
		}
	}
	for t, exp := range s.used {
		if now.After(exp) {
			delete(s.used, t)
		}
	}
	if len(s.tokens) >= maxTokens {
		s.log.Warn("too many unused session tokens; refusing one", "job", o.JobID)
		return
	}
	s.tokens[o.Token] = o
	close(s.granted)
	s.granted = make(chan struct{})
}

// await returns the order of token, waiting up to tokenWait for it to
// arrive, without using it up: nil when it does not come, was used, or has
// expired.
func (s *sessions) await(ctx context.Context, token string) *api.SessionOrder {
	deadline := time.NewTimer(s.wait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		o := s.tokens[token]
		_, used := s.used[token]
		ch := s.granted
		s.mu.Unlock()
		switch {
		case used:
			return nil
		case o != nil && time.Now().After(o.Expires):
			return nil
		case o != nil:
			return o
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// use uses up token, whose order is o: false when another connection used
// it first. A connection uses its token only once it has shown all it
// needs (its MUNGE credential): one that knows a token but not its owner's
// credential cannot take the session from its owner.
func (s *sessions) use(token string, o *api.SessionOrder) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o == nil || s.tokens[token] != o {
		return false
	}
	delete(s.tokens, token)
	if len(s.used) < maxTokens {
		s.used[token] = o.Expires
	}
	return true
}

// hasPrimary reports whether the job's own session ever connected.
func (s *sessions) hasPrimary(job string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.primary[job]
}

// serve accepts session connections until l is closed.
func (s *sessions) serve(ctx context.Context, l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("session accept", "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		host := remoteHost(c.RemoteAddr())
		slot, evicted, err := s.pending.Admit(host, func() { c.Close() })
		if len(evicted) > 0 {
			s.logs.Warn(s.log, "session port: closed the oldest connections that showed no token, to make room", "remote", c.RemoteAddr(), "closed_from", evicted)
		}
		if err != nil {
			s.logs.Warn(s.log, "session refused", "remote", c.RemoteAddr(), "why", err)
			go func() {
				defer c.Close()
				c.SetWriteDeadline(time.Now().Add(time.Second))
				session.NewWriter(c).Text(session.TypeRefused, err.Error())
			}()
			continue
		}
		go s.handleAuth(ctx, c, slot)
	}
}

// nodeName is the node's name for messages ("this node" without a
// supervisor).
func (s *sessions) nodeName() string {
	if s.sup == nil || s.sup.node == "" {
		return "this node"
	}
	return s.sup.node
}

// remoteHost is the address a connection comes from, without its port.
func remoteHost(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// handle runs one session connection.
func (s *sessions) handle(ctx context.Context, c net.Conn) { s.handleAuth(ctx, c, nil) }

// handleAuth is handle for a connection that holds slot of s.pending
// (nil: none) until it has presented a good token (and, where needed, its
// MUNGE credential); it then holds a session slot of its uid's and one of
// the node's, or is refused with the limit named.
func (s *sessions) handleAuth(ctx context.Context, c net.Conn, slot *conns.Slot) {
	defer c.Close()
	if slot != nil {
		defer slot.Release()
	}
	remote := c.RemoteAddr().String()
	w := session.NewWriter(c)
	refuse := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		s.logs.Warn(s.log, "session refused", "remote", remote, "why", msg)
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		w.Text(session.TypeRefused, msg)
	}
	c.SetReadDeadline(time.Now().Add(s.helloWait))
	r := bufio.NewReader(c)
	f, err := session.ReadFrame(r)
	if err != nil || f.Type != session.TypeHello {
		refuse("the first frame must be a hello")
		return
	}
	var h session.Hello
	if err := session.Decode(f, &h); err != nil {
		refuse("%v", err)
		return
	}
	if err := h.Check(); err != nil {
		refuse("%v", err)
		return
	}
	o := s.await(ctx, h.Token)
	if o == nil {
		refuse("unknown, used or expired session token")
		return
	}
	if slot != nil {
		// A token the controller granted: no newer connection takes
		// its slot while its credential is checked. (Until then it may:
		// hellos with made-up tokens, which wait tokenWait for nothing,
		// must not fill the slots.)
		slot.Settle()
	}
	log := s.log.With("job", o.JobID, "uid", o.UID, "remote", remote)
	if o.Munge {
		if h.Munge == "" {
			refuse("this session needs a MUNGE credential")
			return
		}
		cred, err := munge.Decode(ctx, s.munge, h.Munge)
		if err != nil {
			refuse("MUNGE credential refused: %v", err)
			return
		}
		if cred.UID != o.UID || !bytes.Equal(cred.Payload, session.CredentialPayload(h.Token)) {
			refuse("the MUNGE credential is not the session owner's, or not for this session")
			return
		}
	}
	releaseUser, err := s.perUser.Acquire(strconv.FormatUint(uint64(o.UID), 10))
	if err != nil {
		refuse("node %s: %v", s.nodeName(), err)
		return
	}
	defer releaseUser()
	releaseAll, err := s.all.Acquire("on node " + s.nodeName())
	if err != nil {
		refuse("%v", err)
		return
	}
	defer releaseAll()
	if !s.use(h.Token, o) {
		refuse("unknown, used or expired session token")
		return
	}
	if slot != nil {
		slot.Release()
	}
	j, err := s.waitJob(ctx, o)
	if err != nil {
		refuse("%v", err)
		return
	}
	if o.Primary {
		s.mu.Lock()
		dup := s.primary[o.JobID]
		s.primary[o.JobID] = true
		s.mu.Unlock()
		if !j.interactive {
			refuse("job %s is not interactive", o.JobID)
			return
		}
		if dup {
			refuse("job %s's interactive session is connected already", o.JobID)
			return
		}
	}
	c.SetReadDeadline(time.Time{})
	s.run(ctx, log, c, r, w, o, &h)
}

// jobView is what a session reads of a job, on the job's serial.
type jobView struct {
	found, running, interactive bool
	run                         int
	stop                        string
}

// view reads the job's state behind the orders queued for it.
func (s *sessions) view(ctx context.Context, id string) (jobView, bool) {
	var v jobView
	done := make(chan struct{})
	s.sup.serial.Do(id, func() {
		defer close(done)
		if j := s.sup.get(id); j != nil {
			v = jobView{found: true, running: j.running, interactive: j.rec.Interactive, run: j.rec.Run, stop: j.rec.StopReason}
		}
	})
	select {
	case <-done:
		return v, true
	case <-ctx.Done():
		return v, false
	}
}

// waitJob waits for the order's run to run on this node.
func (s *sessions) waitJob(ctx context.Context, o *api.SessionOrder) (jobView, error) {
	deadline := time.Now().Add(jobWait)
	for {
		v, ok := s.view(ctx, o.JobID)
		switch {
		case !ok:
			return v, fmt.Errorf("node daemon stopping")
		case v.found && v.run == o.Run && v.running:
			return v, nil
		case v.found && v.run == o.Run && v.stop != "":
			return v, fmt.Errorf("job %s has ended: %s", o.JobID, stopText(v.stop))
		case v.found && v.run == o.Run:
			return v, fmt.Errorf("job %s has ended", o.JobID)
		case v.found && v.run > o.Run:
			return v, fmt.Errorf("job %s runs again (run %d); ask for a new session", o.JobID, v.run)
		case time.Now().After(deadline):
			return v, fmt.Errorf("job %s did not start on this node within %v", o.JobID, jobWait)
		}
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("node daemon stopping")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// run executes the session's process and pumps its frames.
func (s *sessions) run(ctx context.Context, log *slog.Logger, c net.Conn, r io.Reader, w *session.Writer, o *api.SessionOrder, h *session.Hello) {
	args := o.Command
	if len(args) == 0 {
		args = shellArgs(loginShell(o.UID))
	}
	env := []string{}
	if h.TTY {
		term := h.Term
		if term == "" {
			term = "xterm"
		}
		env = append(env, "TERM="+term)
	}
	if o.Primary {
		env = append(env, "PBS_ENVIRONMENT=PBS_INTERACTIVE")
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	// Output waits for Ready: the client reads the answer to its hello first.
	ready := make(chan struct{})
	readyOnce := sync.OnceFunc(func() { close(ready) })
	defer readyOnce()
	ex := runtime.ExecSpec{Args: args, Env: env, TTY: h.TTY, Rows: h.Rows, Cols: h.Cols, Stdin: pr,
		Stdout: gated{ready, session.Stream{W: w, Type: session.TypeStdout}},
		Stderr: gated{ready, session.Stream{W: w, Type: session.TypeStderr}}}
	if h.TTY {
		ex.Stderr = nil
	}
	// Registered before the exec, which may take seconds: a notice from
	// now on (a walltime warning, a stop) waits for Ready, not lost.
	live := &liveSession{w: w, primary: o.Primary, run: o.Run}
	s.register(o.JobID, live)
	defer s.unregister(o.JobID, live)
	octx, cancel := s.sup.opCtx()
	p, err := s.exec.Exec(octx, o.JobID, ex)
	cancel()
	if err != nil {
		log.Error("session exec", "err", err)
		if v, _ := s.view(context.WithoutCancel(ctx), o.JobID); v.run == o.Run && v.stop != "" {
			// The stop came as it connected (an interactive job's holder
			// ends at SIGTERM): it is told why, as in waitJob.
			w.Text(session.TypeRefused, fmt.Sprintf("job %s has ended: %s", o.JobID, stopText(v.stop)))
		} else {
			w.Text(session.TypeRefused, "cannot start the session's process: "+err.Error())
		}
		if o.Primary {
			s.endJob(o.JobID, 1)
		}
		return
	}
	log.Info("session started", "primary", o.Primary, "tty", h.TTY, "munge", o.Munge, "args", args)
	if err := live.start(session.Ready{Job: o.JobID, Node: s.sup.node, Args: args}); err != nil {
		p.Signal(context.Background(), syscall.SIGKILL)
	}
	readyOnce()

	exited := make(chan struct{})
	go func() {
		// The client's frames; when it goes away the process gets SIGHUP,
		// as a terminal's hangup, and SIGKILL if it lingers.
		defer pw.Close()
		for {
			f, err := session.ReadFrame(r)
			if err != nil {
				select {
				case <-exited:
					return
				default:
				}
				log.Info("session client gone; hanging up", "err", err)
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				p.Signal(sctx, syscall.SIGHUP)
				cancel()
				select {
				case <-exited:
				case <-time.After(hangupGrace):
					sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					p.Signal(sctx, syscall.SIGKILL)
					cancel()
				}
				return
			}
			switch f.Type {
			case session.TypeStdin:
				if _, err := pw.Write(f.Payload); err != nil {
					continue // the process closed its input
				}
			case session.TypeResize:
				rows, cols, _ := session.ParseResize(f.Payload)
				if h.TTY && rows > 0 && cols > 0 {
					sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					p.Resize(sctx, rows, cols)
					cancel()
				}
			case session.TypeEOF:
				pw.Close()
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				p.CloseStdin(sctx)
				cancel()
			default:
				log.Warn("unexpected session frame from the client", "type", f.Type)
			}
		}
	}()
	status, err := p.Wait(context.WithoutCancel(ctx))
	close(exited)
	pw.CloseWithError(io.EOF)
	if err != nil {
		log.Error("session wait", "err", err)
		status = -1
	}
	v, _ := s.view(context.WithoutCancel(ctx), o.JobID)
	reason := stopText(v.stop)
	log.Info("session ended", "status", status, "reason", reason)
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	w.JSON(session.TypeExit, session.Exit{Status: status, Reason: reason})
	if o.Primary && reason == "" {
		s.endJob(o.JobID, status)
	}
}

// endJob ends an interactive job with its session's status.
func (s *sessions) endJob(job string, status int) {
	if err := endInteractive(s.sup.store.jobDir(job), status); err != nil {
		s.log.Error("cannot end the interactive job", "job", job, "err", err)
	}
}

// stopText says a stop reason to a user.
func stopText(r string) string {
	switch r {
	case "":
		return ""
	case reasonWalltime:
		return "the job used up its walltime"
	case string(api.StopPreempted):
		return "the job was preempted"
	case string(api.StopDeleted):
		return "the job was deleted (qdel)"
	case string(api.StopRerun):
		return "the job is rerun (qrerun): it goes back to the queue"
	case string(api.StopFailed):
		return "another node's part of the job failed"
	case reasonSessionLost:
		return errSessionLost
	}
	return "the job was stopped (" + r + ")"
}

// shellArgs runs shell when the image has it, else /bin/sh.
func shellArgs(shell string) []string {
	return []string{"/bin/sh", "-c", `if [ -x "$1" ]; then exec "$1" -l; fi; exec /bin/sh -l`, "sharq-session", shell}
}

// loginShell is uid's login shell in this node's /etc/passwd, "" when it
// has none there.
func loginShell(uid uint32) string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	want := strconv.FormatUint(uint64(uid), 10)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ":")
		if len(fs) == 7 && fs[2] == want && strings.HasPrefix(fs[6], "/") {
			return fs[6]
		}
	}
	return ""
}

// listenSessions opens the session port, with TLS (the node's
// certificate) when the cluster's client connections use TLS.
func listenSessions(addr string, tc *tls.Config) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("session port %s: %w", addr, err)
	}
	if tc != nil {
		return tls.NewListener(l, tc), nil
	}
	return l, nil
}

// gated is a writer whose writes wait until ready is closed.
type gated struct {
	ready <-chan struct{}
	w     io.Writer
}

func (g gated) Write(p []byte) (int, error) {
	<-g.ready
	return g.w.Write(p)
}
