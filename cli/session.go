package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/session"
)

// SessionDialer connects to the node a session grant names and returns
// the connection and, when the grant asks for one, the MUNGE credential
// that binds its token (client.AutoSession is the real one).
type SessionDialer func(ctx context.Context, g *api.SessionGrant) (net.Conn, string, error)

// readyWait bounds the wait for the node's answer to the session's hello.
const readyWait = 3 * time.Minute

// openSession asks the controller for a session and connects it to sys's
// streams: a terminal in raw mode when Term is set (its size follows the
// window), plain pipes otherwise. It returns the session's exit status as
// an exitStatus error.
func openSession(ctx context.Context, sys *Sys, prog string, spec api.SessionSpec) error {
	if sys.DialSession == nil {
		return errors.New("this command cannot open sessions (no session dialer)")
	}
	resp, err := call(ctx, sys, api.Request{Op: api.OpSession, Session: &spec})
	if err != nil {
		return err
	}
	g := resp.Session
	if g == nil || len(g.Token) != session.TokenLen {
		return errors.New("sharqctld granted no session")
	}
	conn, cred, err := sys.DialSession(ctx, g)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	h := session.Hello{V: session.Version, Token: g.Token, Munge: cred}
	var fd int
	if sys.Term != nil {
		fd = int(sys.Term.Fd())
		h.TTY = true
		if cols, rows, err := term.GetSize(fd); err == nil {
			h.Rows, h.Cols = clampSize(rows), clampSize(cols)
		}
		h.Term, _ = sys.getenv("TERM")
		if len(h.Term) > 64 || strings.ContainsFunc(h.Term, func(r rune) bool { return r <= ' ' || r > '~' }) {
			h.Term = ""
		}
	}
	w := session.NewWriter(conn)
	if err := w.JSON(session.TypeHello, h); err != nil {
		return fmt.Errorf("session on %s: %w", g.Node, err)
	}
	r := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(readyWait))
	f, err := session.ReadFrame(r)
	if err != nil {
		if ctx.Err() != nil {
			return exitStatus(130)
		}
		return fmt.Errorf("lost the session on %s before it began (%v): the node daemon may have restarted; qstat -f %s says how the job ended", g.Node, err, g.Job)
	}
	switch f.Type {
	case session.TypeRefused:
		return fmt.Errorf("session on %s refused: %s", g.Node, printable(string(f.Payload)))
	case session.TypeReady:
	default:
		return fmt.Errorf("session on %s: unexpected answer (frame %d)", g.Node, f.Type)
	}
	conn.SetReadDeadline(time.Time{})

	restore := func() {}
	if sys.Term != nil {
		if st, err := term.MakeRaw(fd); err == nil {
			restore = func() { term.Restore(fd, st) }
		}
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for range winch {
				if cols, rows, err := term.GetSize(fd); err == nil {
					w.Resize(clampSize(rows), clampSize(cols))
				}
			}
		}()
	}
	defer restore()
	nl := "\n"
	if sys.Term != nil {
		nl = "\r\n" // raw mode: no output processing
	}
	go func() {
		buf := make([]byte, session.MaxData)
		for {
			n, err := sys.Stdin.Read(buf)
			if n > 0 {
				if w.Data(session.TypeStdin, buf[:n]) != nil {
					return
				}
			}
			if err != nil {
				w.Frame(session.TypeEOF, nil)
				return
			}
		}
	}()
	for {
		f, err := session.ReadFrame(r)
		if err != nil {
			restore()
			if ctx.Err() != nil {
				fmt.Fprintf(sys.Stderr, "%s: session ended by a signal\n", prog)
				return exitStatus(130)
			}
			fmt.Fprintf(sys.Stderr, "%s: lost the session on %s (%v): the node daemon may have restarted; qstat -f %s says how the job ended\n",
				prog, g.Node, err, g.Job)
			return exitStatus(ExitFailure)
		}
		switch f.Type {
		case session.TypeStdout:
			sys.Stdout.Write(f.Payload)
		case session.TypeStderr:
			sys.Stderr.Write(f.Payload)
		case session.TypeNotice:
			fmt.Fprintf(sys.Stderr, "%s%s: %s%s", nl, prog, printable(string(f.Payload)), nl)
		case session.TypeExit:
			restore()
			var e session.Exit
			if err := session.Decode(f, &e); err != nil {
				return fmt.Errorf("session on %s: %w", g.Node, err)
			}
			if e.Reason != "" {
				fmt.Fprintf(sys.Stderr, "%s: job %s: %s\n", prog, g.Job, printable(e.Reason))
			}
			if e.Status < 0 || e.Status > 255 {
				return exitStatus(ExitFailure)
			}
			return exitStatus(e.Status)
		case session.TypeRefused:
			restore()
			return fmt.Errorf("session on %s: %s", g.Node, printable(string(f.Payload)))
		}
	}
}

// clampSize keeps a terminal dimension in a frame's range.
func clampSize(n int) uint16 { return uint16(min(max(n, 0), 0xffff)) }
