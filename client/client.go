package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"sharq/api"
)

// DefaultSocket is where sharqctld listens unless SHARQ_SOCKET says otherwise.
const DefaultSocket = "/run/sharq/sharq.sock"

// DialTimeout bounds connecting to the socket (not the request itself, whose
// bound is the context: qsub -W block=true waits for days).
const DialTimeout = 5 * time.Second

var (
	// ErrUnreachable wraps every failure to connect to the controller.
	ErrUnreachable = errors.New("cannot reach sharqctld")
	// ErrProtocol wraps a response that is not a valid answer (wrong
	// version, malformed, connection closed before the answer).
	ErrProtocol = errors.New("bad response from sharqctld")
)

// Socket returns the controller's socket path: $SHARQ_SOCKET, else
// DefaultSocket.
func Socket() string {
	if s := os.Getenv("SHARQ_SOCKET"); s != "" {
		return s
	}
	return DefaultSocket
}

// MaxResponse bounds an answer: qstat over a few hundred thousand jobs fits.
const MaxResponse = 1 << 30

// Call sends req (with V set to api.Version) to the controller at socket and
// returns its response. When the controller refused the request, Call returns
// the response together with an error that is its *api.Error (errors.As).
// Failing to connect returns an error wrapping ErrUnreachable; a bad or
// missing answer one wrapping ErrProtocol; ctx ending aborts the call with
// ctx's error.
func Call(ctx context.Context, socket string, req api.Request) (*api.Response, error) {
	req.V = api.Version
	d := net.Dialer{Timeout: DialTimeout}
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: %w (is it running? set SHARQ_SOCKET)", ErrUnreachable, socket, unwrapOp(err))
	}
	defer conn.Close()
	// Closing the connection is the one way to interrupt a blocked read.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	if err := api.Encode(conn, req); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: sending %s request: %w", ErrUnreachable, socket, req.Op, err)
	}
	var resp api.Response
	if err := api.NewDecoderLimit(conn, MaxResponse).ReadResponse(&resp); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: reading the answer to %s: %w", ErrProtocol, socket, req.Op, err)
	}
	if resp.Error != nil {
		return &resp, resp.Error
	}
	if resp.V != api.Version {
		return &resp, fmt.Errorf("%w at %s: protocol version %d, this client speaks %d", ErrProtocol, socket, resp.V, api.Version)
	}
	return &resp, nil
}

// Caller returns a function that sends each request to socket with Call; it
// is what the commands' mains hand to package cli.
func Caller(socket string) func(context.Context, api.Request) (*api.Response, error) {
	return func(ctx context.Context, req api.Request) (*api.Response, error) {
		return Call(ctx, socket, req)
	}
}

// unwrapOp drops net.OpError's "dial unix PATH:" prefix, which would repeat
// the path the message already names.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
