package client

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// serve answers each connection on a fresh socket with handle's raw reply
// (written verbatim) and hands the decoded request to got.
func serve(t *testing.T, handle func(req api.Request, w io.Writer)) (string, <-chan api.Request) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan api.Request, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req api.Request
				if err := api.NewDecoder(c).Decode(&req); err != nil {
					return
				}
				got <- req
				handle(req, c)
			}()
		}
	}()
	return path, got
}

func TestCall(t *testing.T) {
	tests := []struct {
		name     string
		reply    string // raw line; "" writes nothing and closes
		wantErr  error  // errors.Is target, nil for success
		wantCode string // *api.Error code, when the controller refused
		wantResp bool
	}{
		{name: "ok", reply: `{"v":1,"job_id":"12.lab"}` + "\n", wantResp: true},
		{name: "refused", reply: `{"v":1,"error":{"code":"unknown_job","message":"Unknown Job Id 9.lab","id":"9.lab"}}` + "\n", wantCode: api.CodeUnknownJob, wantResp: true},
		{name: "wrong version", reply: `{"v":7}` + "\n", wantErr: ErrProtocol, wantResp: true},
		{name: "malformed", reply: "{not json\n", wantErr: ErrProtocol},
		{name: "closed without answer", reply: "", wantErr: ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock, got := serve(t, func(_ api.Request, w io.Writer) { io.WriteString(w, tt.reply) })
			resp, err := Call(context.Background(), sock, api.Request{Op: api.OpDelete, IDs: []string{"9"}})
			req := <-got
			if req.V != api.Version || req.Op != api.OpDelete || len(req.IDs) != 1 || req.IDs[0] != "9" {
				t.Errorf("server got %+v", req)
			}
			if (resp != nil) != tt.wantResp {
				t.Errorf("resp = %+v, want present %v", resp, tt.wantResp)
			}
			switch {
			case tt.wantCode != "":
				var ae *api.Error
				if !errors.As(err, &ae) || ae.Code != tt.wantCode {
					t.Fatalf("err = %v, want *api.Error %s", err, tt.wantCode)
				}
				if resp.Error != ae {
					t.Errorf("returned error is not resp.Error")
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if resp.JobID != "12.lab" {
					t.Errorf("JobID = %q", resp.JobID)
				}
			}
		})
	}
}

// TestCallTooLarge: a request over api.MaxMessage (a huge script) is
// refused by the client with api.ErrTooLarge, before it sends anything,
// and one just within the bound goes through.
func TestCallTooLarge(t *testing.T) {
	path, got := serve(t, func(req api.Request, w io.Writer) { io.WriteString(w, `{"v":1,"job_id":"1.lab"}`+"\n") })
	submit := func(script int) error {
		_, err := Call(context.Background(), path, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Script: strings.Repeat("x", script)}}})
		return err
	}
	if err := submit(api.MaxMessage); !errors.Is(err, api.ErrTooLarge) || !strings.Contains(err.Error(), "submit request of") {
		t.Fatalf("err = %v, want ErrTooLarge naming the request", err)
	}
	select {
	case req := <-got:
		t.Fatalf("the controller got a request of %d script bytes", len(req.Submit.Job.Script))
	default:
	}
	if err := submit(api.MaxMessage - 1000); err != nil {
		t.Fatalf("a request within the bound: %v", err)
	}
}

func TestCallUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing.sock")
	_, err := Call(context.Background(), sock, api.Request{Op: api.OpStat})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, want := range []string{"cannot reach sharqctld at unix socket " + sock, "no such file", "chosen by SHARQ_SOCKET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestCallCancelWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	sock, got := serve(t, func(api.Request, io.Writer) { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Call(ctx, sock, api.Request{Op: api.OpWait, IDs: []string{"1.lab"}})
		done <- err
	}()
	<-got // the request is in; the server never answers
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return after its context was cancelled")
	}
}

func TestSocket(t *testing.T) {
	t.Setenv("SHARQ_SOCKET", "")
	if got := Socket(); got != DefaultSocket {
		t.Errorf("Socket() = %q, want %q", got, DefaultSocket)
	}
	t.Setenv("SHARQ_SOCKET", "/tmp/x.sock")
	if got := Socket(); got != "/tmp/x.sock" {
		t.Errorf("Socket() = %q", got)
	}
}

func TestCaller(t *testing.T) {
	sock, _ := serve(t, func(_ api.Request, w io.Writer) { api.Encode(w, api.Response{V: api.Version, Text: "hi"}) })
	resp, err := Caller(sock)(context.Background(), api.Request{Op: api.OpConfig})
	if err != nil || resp.Text != "hi" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

// Auto locates the controller from the environment once, at the first
// request.
func TestAuto(t *testing.T) {
	sock, _ := serve(t, func(_ api.Request, w io.Writer) { api.Encode(w, api.Response{V: api.Version, Text: "auto"}) })
	t.Setenv("SHARQ_SERVER", "")
	t.Setenv("SHARQ_SOCKET", sock)
	call := Auto()
	for range 2 {
		resp, err := call(context.Background(), api.Request{Op: api.OpConfig})
		if err != nil || resp.Text != "auto" {
			t.Fatalf("resp %+v err %v", resp, err)
		}
	}
	t.Setenv("SHARQ_SOCKET", "")
	t.Setenv("SHARQ_CONF", filepath.Join(t.TempDir(), "missing.toml"))
	if _, err := Auto()(context.Background(), api.Request{Op: api.OpConfig}); !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig for a named configuration that is missing", err)
	}
}
