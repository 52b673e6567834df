package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/sharq-hpc/sharq/api"
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
	// ErrCredential wraps a failure to get a MUNGE credential from the
	// local munged (not running, wrong socket).
	ErrCredential = errors.New("cannot get a MUNGE credential")
	// ErrConfig wraps a cluster.toml that cannot say where the controller
	// is (unreadable, invalid).
	ErrConfig = errors.New("cannot find sharqctld")
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
	return Target{Socket: socket, From: "SHARQ_SOCKET"}.Call(ctx, req)
}

// callUnix is Call on t's Unix socket: the kernel tells the controller who
// is calling.
func (t Target) callUnix(ctx context.Context, req api.Request) (*api.Response, error) {
	req.V = api.Version
	line, err := encodeLine(req)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: DialTimeout}
	conn, err := d.DialContext(ctx, "unix", t.Socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", req.Op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: %w (is it running? %s)", ErrUnreachable, t.Transport(), unwrapOp(err), t.hint())
	}
	defer conn.Close()
	return t.exchange(ctx, conn, req.Op, line)
}

// exchange writes out (whole messages) on conn and reads the answer to op.
func (t Target) exchange(ctx context.Context, conn net.Conn, op api.Op, out []byte) (*api.Response, error) {
	// Closing the connection is the one way to interrupt a blocked read.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(out); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: sending %s request: %w", ErrUnreachable, t.Transport(), op, err)
	}
	var resp api.Response
	if err := api.NewDecoderLimit(conn, MaxResponse).ReadResponse(&resp); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s request: %w", op, ctx.Err())
		}
		return nil, fmt.Errorf("%w at %s: reading the answer to %s: %w", ErrProtocol, t.Transport(), op, err)
	}
	if resp.Error != nil {
		return &resp, resp.Error
	}
	if resp.V != api.Version {
		return &resp, fmt.Errorf("%w at %s: protocol version %d, this client speaks %d", ErrProtocol, t.Transport(), resp.V, api.Version)
	}
	return &resp, nil
}

// encodeLine is req as one line, the bytes that go on the wire. A line
// over api.MaxMessage is refused here: the controller would read that much
// of it and close, and the client would see a broken pipe.
func encodeLine(req api.Request) ([]byte, error) {
	req.V = api.Version
	var b lineBuffer
	if err := api.EncodeRequest(&b, &req); err != nil {
		return nil, fmt.Errorf("%s request: %w", req.Op, err)
	}
	if len(b) > api.MaxMessage {
		return nil, fmt.Errorf("%s request of %d bytes: %w (limit %d bytes: a script, command or environment this large cannot be sent)",
			req.Op, len(b), api.ErrTooLarge, api.MaxMessage)
	}
	return b, nil
}

type lineBuffer []byte

func (b *lineBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// Caller returns a function that sends each request to socket with Call; it
// is what tests hand to package cli.
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
