package ctld

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// listenUnix opens the client socket, replacing a stale one. The socket is
// world-writable: the kernel tells us who connects.
func listenUnix(path string) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("socket %s: another sharqctld is serving it", path)
	}
	_ = os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return l, nil
}

// requestTimeout bounds how long a client may take to send its request.
const requestTimeout = 10 * time.Second

// serveClient answers requests on one connection, one at a time.
func (c *Controller) serveClient(ctx context.Context, nc net.Conn) {
	defer c.survive("client")
	defer nc.Close()
	conn := nc.(*net.UnixConn)
	id, err := peerIdentity(conn)
	if err != nil {
		c.log.Warn("client refused", "err", err)
		return
	}
	release, err := c.limits.user(id.UID)
	if err != nil {
		c.log.Warn("client refused", "uid", id.UID, "err", err)
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		api.Encode(conn, &api.Response{V: api.Version, Error: &api.Error{Code: api.CodeBadRequest, Message: err.Error()}})
		return
	}
	defer release()
	// A stopping controller wakes a read or a write that waits for a
	// client (one that never reads its answer cannot hold up Run's join).
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	dec := api.NewDecoder(conn)
	for {
		conn.SetReadDeadline(time.Now().Add(requestTimeout))
		if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
			return
		}
		var req api.Request
		err := dec.Decode(&req)
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				c.log.Warn("malformed request", "uid", id.UID, "err", err)
				api.Encode(conn, &api.Response{V: api.Version, Error: badRequest(err.Error())})
			}
			return // the stream may be out of step after a bad message
		}
		if req.Op == api.OpSubmit && req.V == api.Version {
			// The loop answers once the job is durable (reply.go). Until
			// then this goroutine waits for the client's next request, or
			// its close, which it would wait for next anyway: the loop
			// need not wake it. The answer is waited for before the next
			// request is read and before the connection closes. The wait
			// keeps the request's read deadline: whatever ends it (EOF,
			// the deadline, a stop), the next Decode, with a new deadline,
			// starts from the same byte.
			o := c.postSubmit(ctx, id, &req, conn)
			if o == nil {
				api.WriteResponse(conn, opResponse(ctx, nil, ctx.Err()))
				return
			}
			dec.Wait()
			if !awaitReply(ctx, o) {
				return
			}
			continue
		}
		conn.SetReadDeadline(time.Time{})
		resp := c.handleSafe(ctx, id, &req)
		resp.V = api.Version
		if err := api.WriteResponse(conn, resp); err != nil {
			return
		}
	}
}
