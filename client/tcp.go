package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
)

// DefaultTimeout is Target.Timeout's default: long enough for a failover
// (the default etcd session TTL is 5 s; a new leader restores its jobs and
// answers within a few seconds more) with room for a paused leader's
// unanswered request before it.
const DefaultTimeout = 30 * time.Second

// MaxTimeout bounds SHARQ_SERVER_TIMEOUT: a controller remembers a
// submission's request id for 10 minutes, so a retry within MaxTimeout
// always finds the job its first try made.
const MaxTimeout = 5 * time.Minute

// Retry backoff between rounds over the servers.
const (
	minRetryDelay = 100 * time.Millisecond
	maxRetryDelay = 2 * time.Second
)

// callTCP sends req, after a Credential line from the local munged that
// binds it to the request's bytes, to t.Servers until one leader answers
// or t.Timeout has passed since the call began.
//
// Each round tries the servers in order. A follower's CodeNotLeader
// answer sends the request next to the leader it names, unless that is
// the follower itself, a server that already failed in this round, or
// one already asked in it (a follower may name a leader that just died,
// or its own previous process). A server that refuses the connection,
// does not answer within a third of the timeout, or whose connection
// breaks after the request was sent, is left for the next. After a round
// without an answer the call waits (from 100 ms, doubling, at most 2 s)
// and starts another, until the timeout. Retrying a request that may
// have arrived is safe: a submit carries a request id the controller
// remembers (a repeated id gets the job the first try made), and the
// other requests are idempotent. Every retry carries a fresh credential,
// since munged refuses one it has seen. A request left unanswered by a
// paused leader cannot commit later: every write is fenced.
func (t Target) callTCP(ctx context.Context, req api.Request) (*api.Response, error) {
	if req.Op == api.OpSubmit && req.Submit != nil && req.Submit.RequestID == "" {
		s := *req.Submit
		s.RequestID = newRequestID()
		req.Submit = &s
	}
	line, err := encodeLine(req)
	if err != nil {
		return nil, err
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	wait := timeout / 3
	deadline := time.Now().Add(timeout)
	var failures []string
	delay := minRetryDelay
	for round := 1; ; round++ {
		failures = failures[:0]
		resp, done, err := t.round(ctx, req.Op, line, deadline, wait, &failures)
		if done {
			return resp, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		left := time.Until(deadline)
		if left > delay {
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
			case <-timer.C:
			}
			delay = min(2*delay, maxRetryDelay)
			continue
		}
		tries := "1 round"
		if round > 1 {
			tries = fmt.Sprintf("%d rounds; the last", round)
		}
		return nil, fmt.Errorf("%w at %s: no leader answered within %v (%s: %s) (is it running, is the port open? %s)",
			ErrUnreachable, t.Transport(), timeout, tries, strings.Join(failures, "; "), t.hint())
	}
}

// round tries the servers once each (and the leaders they name), adding
// why each failed to failures. done reports an answer (resp, err) to
// return: a success, or any answer but those that send the request
// elsewhere (CodeNotLeader, CodeUnavailable, no answer); a credential that
// cannot be had or a certificate that does not verify ends the call too.
func (t Target) round(ctx context.Context, op api.Op, line []byte, deadline time.Time, wait time.Duration,
	failures *[]string) (resp *api.Response, done bool, err error) {
	queue := append([]string(nil), t.Servers...)
	asked := map[string]bool{}
	for i := 0; i < len(queue); i++ {
		addr := queue[i]
		if asked[addr] {
			continue
		}
		asked[addr] = true
		if i > 0 && time.Until(deadline) <= 0 {
			break
		}
		out, err := t.signed(ctx, op, line)
		if err != nil {
			return nil, true, err
		}
		conn, err := t.dial(ctx, addr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, true, fmt.Errorf("%s request: %w", op, ctx.Err())
			}
			var cerr *tls.CertificateVerificationError
			if errors.As(err, &cerr) {
				// A configuration error (the CA, the host's certificate),
				// not a failover: asking again changes nothing.
				return nil, true, fmt.Errorf("%w at %s: %s: %w (%s)", ErrUnreachable, t.Transport(), addr, unwrapOp(err), t.hint())
			}
			*failures = append(*failures, fmt.Sprintf("%s: %v", addr, unwrapOp(err)))
			continue
		}
		one := t
		one.Servers = []string{addr}
		actx, cancel := ctx, context.CancelFunc(func() {})
		// One server: nothing else to ask, its answer is waited for (a
		// qstat of a large cluster takes its time). qsub -W block=true
		// waits for the job's end.
		if op != api.OpWait && len(t.Servers) > 1 {
			actx, cancel = context.WithTimeout(ctx, min(wait, max(time.Until(deadline), time.Second)))
		}
		resp, err := one.exchange(actx, conn, op, out)
		timedOut := err != nil && ctx.Err() == nil && actx.Err() != nil
		cancel()
		conn.Close()
		var ae *api.Error
		switch {
		case ctx.Err() != nil:
			return nil, true, fmt.Errorf("%s request: %w", op, ctx.Err())
		case timedOut:
			*failures = append(*failures, fmt.Sprintf("%s: no answer within %v", addr, min(wait, max(time.Until(deadline), time.Second))))
			continue
		case errors.As(err, &ae) && ae.Code == api.CodeNotLeader:
			*failures = append(*failures, fmt.Sprintf("%s: %s", addr, ae.Message))
			if l := ae.Leader; l != "" && l != addr && !asked[l] {
				queue = slices.Insert(queue, i+1, l)
			}
			continue
		case errors.As(err, &ae) && ae.Code == api.CodeUnavailable:
			// A leader stopping (its spool failed, or it was deposed):
			// nothing was acknowledged, the next leader is asked.
			*failures = append(*failures, fmt.Sprintf("%s: %s", addr, ae.Message))
			continue
		case errors.Is(err, ErrUnreachable), errors.Is(err, ErrProtocol) && resp == nil:
			// The connection broke, before or after the request went out
			// (a leader killed while answering): ask again.
			*failures = append(*failures, fmt.Sprintf("%s: %v", addr, err))
			continue
		}
		return resp, true, err
	}
	return nil, false, nil
}

// signed is the request line after a fresh Credential line from the local
// munged that binds it to the line's bytes.
func (t Target) signed(ctx context.Context, op api.Op, line []byte) ([]byte, error) {
	cred, err := munge.Encode(ctx, t.MungeSocket, api.RequestPayload(line), 0)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", op, ctx.Err())
		}
		hint := ""
		if errors.Is(err, munge.ErrSocket) {
			hint = " (is munged running on this host? systemctl enable --now munge)"
		}
		return nil, fmt.Errorf("%w for %s: %w%s", ErrCredential, t.Transport(), err, hint)
	}
	var out lineBuffer
	if err := api.Encode(&out, api.Credential{V: api.Version, Munge: cred}); err != nil {
		return nil, fmt.Errorf("%s request: %w", op, err)
	}
	return append(out, line...), nil
}

// newRequestID is a submission's request id: 128 random bits in hex.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
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
