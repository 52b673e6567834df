package conns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"
)

// Backoff bounds between failed accepts.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// Serve accepts connections on l until ctx ends, each handled by handle in
// its own goroutine. An accept that fails for a passing reason (see
// Transient) is logged and retried after a growing pause (5 ms doubling to
// 1 s, reset by the next success); any other failure ends Serve with the
// error. Serve closes l when ctx ends and then returns nil.
func Serve(ctx context.Context, l net.Listener, what string, log *slog.Logger, handle func(net.Conn)) error {
	return ServeIn(ctx, l, what, log, nil, handle)
}

// ServeIn is Serve with each handler run in handlers (handlers.Go), when
// it is not nil, so the caller can join them: once ServeIn has returned
// no handler starts in handlers any more, and handlers.Wait() returns when
// every one it started has returned. (Serve itself does not wait: after a
// failed accept its caller still has to end ctx, which the handlers may be
// waiting for.) A handler must end soon after ctx does, e.g. by a read
// deadline set when ctx ends.
func ServeIn(ctx context.Context, l net.Listener, what string, log *slog.Logger, handlers *sync.WaitGroup, handle func(net.Conn)) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var pause time.Duration
	for {
		conn, err := l.Accept()
		if err == nil {
			pause = 0
			if handlers != nil {
				handlers.Go(func() { handle(conn) })
			} else {
				go handle(conn)
			}
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if !Transient(err) {
			return fmt.Errorf("accept %s: %w", what, err)
		}
		pause = min(max(2*pause, minBackoff), maxBackoff)
		if log != nil {
			log.Warn("accept failed: retrying", "listener", what, "err", err, "retry_in", pause)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
	}
}

// Transient says whether an accept error passes by itself: out of file
// descriptors or memory, a connection aborted before it was accepted, or a
// timeout.
func Transient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
