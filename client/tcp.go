package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"

	"sharq/api"
	"sharq/internal/munge"
)

// callTCP sends req to the first of t.Servers that accepts a connection,
// after a Credential line from the local munged that binds it to the
// request's bytes. A server that refuses the connection is skipped; once
// the request is sent there is no retry (a submit is not idempotent).
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

	var failures []string
	for _, addr := range t.Servers {
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
		resp, err := one.exchange(ctx, conn, req.Op, out)
		conn.Close()
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
