package munge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// Timeouts and retries, as libmunge's (src/libcommon/munge_defs.h and
// src/libmunge/m_msg_client.c): a connection refused (munged's backlog is
// full) is tried again up to connectAttempts times, attempt i after
// i*connectDelay; a request whose exchange fails (munged closed the
// connection, timed out, or answered nonsense) is sent again on a new
// connection up to retryAttempts times in all, after i*retryDelay, with
// the attempt's number in the header (munged lets a retried decode
// through its replay check once). Sending and receiving each have
// socketTimeout, or less when ctx's deadline is sooner.
const (
	socketTimeout   = 2 * time.Second
	retryAttempts   = 5
	retryDelay      = 10 * time.Millisecond
	connectAttempts = 10
	connectDelay    = 50 * time.Millisecond
)

// transact sends the request that req makes for each attempt (retry
// counts from 0) to the munged at socket, reads a reply of type want and
// returns what parse makes of its body. Every error wraps ErrSocket, and
// ctx's error when ctx ended it.
func transact[R any](ctx context.Context, socket string, req func(retry uint8) []byte, want uint8, parse func([]byte) (R, error)) (R, error) {
	var zero R
	for attempt := 1; ; attempt++ {
		conn, err := dial(ctx, socket)
		if err != nil {
			return zero, socketErr(ctx, err)
		}
		body, err := exchange(ctx, conn, req(uint8(attempt-1)), want)
		conn.Close()
		if err == nil {
			var r R
			if r, err = parse(body); err == nil {
				return r, nil
			}
		}
		if attempt >= retryAttempts || errors.Is(err, errTooLong) || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return zero, socketErr(ctx, err)
		}
		if err := sleep(ctx, time.Duration(attempt)*retryDelay); err != nil {
			return zero, socketErr(ctx, err)
		}
	}
}

// socketErr wraps err with ErrSocket, and with ctx's error when ctx is
// done (a deadline it set shows as a timeout otherwise).
func socketErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w: %v", ErrSocket, cerr, err)
	}
	return fmt.Errorf("%w: %w", ErrSocket, err)
}

// dial connects to munged's socket at path. Like libmunge it says so
// when the path is missing or not a socket, and tries a refused
// connection again.
func dial(ctx context.Context, path string) (*net.UnixConn, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (is munged running?)", err)
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("%s is not a socket (%s)", path, fi.Mode().Type())
	}
	var d net.Dialer
	for i := 1; ; i++ {
		c, err := d.DialContext(ctx, "unix", path)
		if err == nil {
			return c.(*net.UnixConn), nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.EAGAIN) || i >= connectAttempts {
			return nil, err
		}
		if err := sleep(ctx, time.Duration(i)*connectDelay); err != nil {
			return nil, err
		}
	}
}

// exchange sends req on conn and reads the reply of type want, each
// within socketTimeout (or until ctx ends).
func exchange(ctx context.Context, conn *net.UnixConn, req []byte, want uint8) ([]byte, error) {
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	// A deadline set after ctx ended would undo the one its AfterFunc
	// set: check ctx after each.
	if err := conn.SetWriteDeadline(deadline(ctx)); err != nil || ctx.Err() != nil {
		return nil, errors.Join(ctx.Err(), err)
	}
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("sending the request: %w", err)
	}
	if err := conn.SetReadDeadline(deadline(ctx)); err != nil || ctx.Err() != nil {
		return nil, errors.Join(ctx.Err(), err)
	}
	return readReply(conn, want)
}

// deadline is socketTimeout from now, or ctx's deadline if sooner.
func deadline(ctx context.Context) time.Time {
	d := time.Now().Add(socketTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
