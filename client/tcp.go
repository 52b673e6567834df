package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
)

// DefaultAnswerTimeout is Target.AnswerTimeout's default: above the
// default etcd session TTL (5 s), so a paused leader has been replaced
// (and is fenced) by the time the client asks the next controller.
const DefaultAnswerTimeout = 10 * time.Second

// MaxRedirects bounds how many "not the leader" answers one call follows.
const MaxRedirects = 3

// callTCP sends req, after a Credential line from the local munged that
// binds it to the request's bytes, to t.Servers in order. It moves on to
// the next server when one refuses the connection, does not answer within
// t.AnswerTimeout, or answers CodeNotLeader (a follower of an HA cluster;
// the leader it names is tried next, at most MaxRedirects times). Any
// other answer, or a connection that breaks after the request was sent,
// ends the call: a submit is not idempotent. A request left unanswered
// by a paused leader cannot commit later: every write is fenced.
func (t Target) callTCP(ctx context.Context, req api.Request) (*api.Response, error) {
	line, err := encodeLine(req)
	if err != nil {
		return nil, err
	}
	cred, err := munge.Encode(ctx, t.MungeSocket, api.RequestPayload(line), 0)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		hint := ""
		if errors.Is(err, munge.ErrSocket) {
			hint = " (is munged running on this host? systemctl enable --now munge)"
		}
		return nil, fmt.Errorf("%w for %s: %w%s", ErrCredential, t.Transport(), err, hint)
	}
	var out lineBuffer
	if err := api.Encode(&out, api.Credential{V: api.Version, Munge: cred}); err != nil {
		return nil, fmt.Errorf("%s request: %w", req.Op, err)
	}
	out = append(out, line...)

	wait := t.AnswerTimeout
	if wait <= 0 {
		wait = DefaultAnswerTimeout
	}
	queue := append([]string(nil), t.Servers...)
	redirects := 0
	var failures []string
	for i := 0; i < len(queue); i++ {
		addr := queue[i]
		conn, err := t.dial(ctx, addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
			}
			failures = append(failures, fmt.Sprintf("%s: %v", addr, unwrapOp(err)))
			continue
		}
		one := t
		one.Servers = []string{addr}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if req.Op != api.OpWait && (len(queue) > 1 || i > 0) {
			actx, cancel = context.WithTimeout(ctx, wait)
		}
		resp, err := one.exchange(actx, conn, req.Op, out)
		timedOut := err != nil && ctx.Err() == nil && actx.Err() != nil
		cancel()
		conn.Close()
		var ae *api.Error
		switch {
		case timedOut:
			failures = append(failures, fmt.Sprintf("%s: no answer within %v", addr, wait))
			continue
		case errors.As(err, &ae) && ae.Code == api.CodeNotLeader:
			failures = append(failures, fmt.Sprintf("%s: %s", addr, ae.Message))
			if ae.Leader != "" && redirects < MaxRedirects {
				redirects++
				queue = slices.Insert(queue, i+1, ae.Leader)
			}
			continue
		}
		return resp, err
	}
	return nil, fmt.Errorf("%w at %s: %s (is it running, is the port open? %s)", ErrUnreachable, t.Transport(),
		strings.Join(failures, "; "), t.hint())
}

// dial connects to addr, with TLS when t says so.
func (t Target) dial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: DialTimeout}
	if t.TLS == nil {
		return d.DialContext(ctx, "tcp", addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cfg := t.TLS.Clone()
	cfg.ServerName = host
	td := tls.Dialer{NetDialer: &d, Config: cfg}
	return td.DialContext(ctx, "tcp", addr)
}
