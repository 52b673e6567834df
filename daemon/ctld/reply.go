package ctld

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/api"
)

// A submission's answer is written by the loop itself, right after the
// turn's spool write made the job durable, instead of waking the
// connection's goroutine to write it: one goroutine hand-off (and the
// thread wake-up it costs) less per qsub. The loop never waits for a
// client: it makes one non-blocking write, and whatever the socket does
// not take at once (a client that does not read its answers) is left to
// the connection's goroutine, which writes it as it writes every other
// answer. The connection's goroutine does not wait for the answer to be
// written before it reads on: it waits only before it handles the next
// request or closes the connection, so answers keep the order of the
// requests and none is cut off.

// reply is an answer the loop writes once the op's effects are durable.
type reply struct {
	conn *net.UnixConn
	resp *api.Response // filled by the op's fn on the loop
	// claimed: the loop (after the spool write) or the goroutine (when the
	// controller stops first) has taken the answer; the other writes none.
	claimed atomic.Bool
	// Set by the loop before it closes the op's done: written says the
	// loop encoded the answer (else the goroutine answers o.err); rest is
	// what the socket did not take at once.
	written bool
	rest    []byte
}

// opResponse is the answer to a request whose op has run (or failed to be
// made durable): handle's answer for it.
func opResponse(ctx context.Context, resp *api.Response, err error) *api.Response {
	if err != nil {
		msg, code := err.Error(), api.CodeInternal
		if errors.Is(err, errNotDurable) {
			code = api.CodeUnavailable
		}
		if ctx.Err() != nil {
			msg, code = "controller stopping: "+msg, api.CodeUnavailable
		}
		return &api.Response{V: api.Version, Error: &api.Error{Code: code, Message: msg}}
	}
	if resp.Error == nil && len(resp.Errors) > 0 {
		e := resp.Errors[0]
		resp.Error = &e
	}
	resp.V = api.Version
	return resp
}

// sendReply writes o's answer without blocking; it runs on the loop after
// the spool write, before o.done is closed. A write error (the client has
// gone) drops the answer: the connection's goroutine sees the connection
// end when it reads.
func sendReply(o *op) {
	r := o.reply
	if !r.claimed.CompareAndSwap(false, true) {
		return // the connection's goroutine answered: the controller is stopping
	}
	var b bytes.Buffer
	if err := api.WriteResponse(&b, opResponse(bgctx, r.resp, o.err)); err != nil {
		return // not written: the goroutine answers with o.err (nil: it encodes again and fails the same way)
	}
	r.written = true
	line := b.Bytes()
	raw, err := r.conn.SyscallConn()
	if err != nil {
		return
	}
	var n int
	var werr error
	err = raw.Write(func(fd uintptr) bool {
		for len(line) > 0 {
			n, werr = unix.Write(int(fd), line)
			if werr == unix.EINTR {
				continue
			}
			if werr != nil || n <= 0 {
				break
			}
			line = line[n:]
		}
		return true // one attempt: never wait for the client on the loop
	})
	if err != nil {
		return // the connection is closed
	}
	if werr == unix.EAGAIN {
		r.rest = line
	}
}

// awaitReply waits until the loop has answered o, then writes what it
// could not. It reports false when the connection should end.
func awaitReply(ctx context.Context, o *op) bool {
	r := o.reply
	select {
	case <-o.done:
	default:
		select {
		case <-o.done:
		case <-ctx.Done():
			if r.claimed.CompareAndSwap(false, true) { // not answered: as handle answers a stopping controller
				api.WriteResponse(r.conn, opResponse(ctx, nil, ctx.Err()))
			}
			return false
		}
	}
	if !r.written {
		return api.WriteResponse(r.conn, opResponse(ctx, r.resp, o.err)) == nil
	}
	if len(r.rest) > 0 {
		_, err := r.conn.Write(r.rest)
		return err == nil
	}
	return true
}

// postSubmit queues a submission whose answer the loop writes. It returns
// nil when the controller is stopping (nothing was queued).
func (c *Controller) postSubmit(ctx context.Context, id Identity, req *api.Request, conn *net.UnixConn) *op {
	r := &reply{conn: conn, resp: &api.Response{}}
	o := &op{done: make(chan struct{}), reply: r}
	o.fn = func() { r.resp.JobID, r.resp.Error = c.submit(id, req.Submit) }
	select {
	case c.ops <- o:
		return o
	case <-ctx.Done():
		return nil
	}
}
