//go:build !unit

package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

func startMunged(t *testing.T) *munged.Daemon { return munged.ForTest(t, "") }

func TestCallTCP(t *testing.T) {
	m := startMunged(t)
	addr := tcpServer(t, m.Socket, nil)
	down := closedAddr(t)
	silent := silentServer(t)
	toAddr, noLeader, toSilent := followerServer(t, addr), followerServer(t, ""), followerServer(t, silent)
	loop := selfFollower(t)
	ctx := context.Background()
	req := api.Request{Op: api.OpDelete, IDs: []string{"7.lab"}}
	// A silent server is given up on after the answer timeout, and the
	// server after it must answer within the same timeout: where the next
	// one should answer, the timeout is generous (munged's decode and the
	// round trip take their time on a loaded machine); those cases run in
	// parallel, so the suite waits for it once. Only "all silent" tests
	// the timeout itself, with servers that never answer.
	const generous = 5 * time.Second

	tests := []struct {
		name     string
		target   Target
		wantErr  error
		contains []string
	}{
		{"one server", Target{Servers: []string{addr}, MungeSocket: m.Socket}, nil, nil},
		{"first down, second answers", Target{Servers: []string{down, addr}, MungeSocket: m.Socket}, nil, nil},
		{"all down", Target{Servers: []string{down, down}, MungeSocket: m.Socket, From: "SHARQ_SERVER", Timeout: 300 * time.Millisecond}, ErrUnreachable,
			[]string{"cannot reach sharqctld at TCP " + down + "," + down + ": no leader answered within 300ms", "connection refused", "chosen by SHARQ_SERVER"}},
		{"silent first (a paused leader), second answers", Target{Servers: []string{silent, addr}, MungeSocket: m.Socket,
			Timeout: 3 * generous}, nil, nil},
		{"only a follower: its leader answers", Target{Servers: []string{toAddr}, MungeSocket: m.Socket}, nil, nil},
		{"follower that knows no leader, next server", Target{Servers: []string{noLeader, addr}, MungeSocket: m.Socket}, nil, nil},
		{"follower naming a silent leader, next server", Target{Servers: []string{toSilent, addr}, MungeSocket: m.Socket,
			Timeout: 3 * generous}, nil, nil},
		{"follower naming itself, next server", Target{Servers: []string{loop, addr}, MungeSocket: m.Socket}, nil, nil},
		{"a follower naming itself is not followed", Target{Servers: []string{loop}, MungeSocket: m.Socket, Timeout: 300 * time.Millisecond},
			ErrUnreachable, []string{"at TCP " + loop + ": no leader answered within 300ms", "the last: " + loop + ": the leader is at " + loop + ") (is it running"}},
		{"all silent", Target{Servers: []string{silent, silent}, MungeSocket: m.Socket, Timeout: 300 * time.Millisecond},
			ErrUnreachable, []string{silent + ": no answer within 100ms"}},
		{"no munged", Target{Servers: []string{addr}, MungeSocket: filepath.Join(t.TempDir(), "none")}, ErrCredential,
			[]string{"cannot get a MUNGE credential for TCP " + addr, "is munged running on this host?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := tt.target.Call(ctx, req)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				for _, s := range tt.contains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got api.Request
			if err := json.Unmarshal([]byte(resp.Text), &got); err != nil || got.Op != api.OpDelete || got.IDs[0] != "7.lab" || got.V != api.Version {
				t.Fatalf("server saw %q (%v)", resp.Text, err)
			}
		})
	}
}

// A submit whose answer was lost is sent again, with the same request id
// (so the controller answers with the job the first try made) and a fresh
// credential (munged refuses one it has seen); a leader that is stopping
// (CodeUnavailable) is asked again too.
func TestCallTCPRetriesLostAnswer(t *testing.T) {
	m := startMunged(t)
	for _, servers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d servers", servers), func(t *testing.T) {
			ls := newLossyServer(t, m.Socket, 2)
			target := Target{Servers: []string{ls.addr}, MungeSocket: m.Socket}
			if servers == 2 {
				target.Servers = append([]string{closedAddr(t)}, ls.addr)
			}
			spec := &api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"true"}, WorkDir: "/tmp"}}
			resp, err := target.Call(context.Background(), api.Request{Op: api.OpSubmit, Submit: spec})
			if err != nil {
				t.Fatal(err)
			}
			if spec.RequestID != "" {
				t.Errorf("the caller's spec was changed: request id %q", spec.RequestID)
			}
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if len(ls.reqs) != 3 {
				t.Fatalf("%d requests arrived, want 3 (two lost answers, then one)", len(ls.reqs))
			}
			var first api.Request
			if err := json.Unmarshal([]byte(ls.reqs[0]), &first); err != nil || first.Submit == nil || len(first.Submit.RequestID) != 32 {
				t.Fatalf("first request %s: no request id (%v)", ls.reqs[0], err)
			}
			for i := range ls.reqs {
				if ls.reqs[i] != ls.reqs[0] {
					t.Errorf("try %d sent %s, the first %s", i+1, ls.reqs[i], ls.reqs[0])
				}
				for k := range i {
					if ls.creds[k] == ls.creds[i] {
						t.Errorf("tries %d and %d sent the same credential", k+1, i+1)
					}
				}
			}
			if strings.TrimSpace(ls.reqs[2]) != resp.Text {
				t.Errorf("answer %q", resp.Text)
			}
		})
	}
	// Two submissions have two request ids.
	ls := newLossyServer(t, m.Socket, 0)
	target := Target{Servers: []string{ls.addr}, MungeSocket: m.Socket}
	for range 2 {
		if _, err := target.Call(context.Background(), api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{}}); err != nil {
			t.Fatal(err)
		}
	}
	if ls.reqs[0] == ls.reqs[1] {
		t.Errorf("two submissions sent the same request %s", ls.reqs[0])
	}
}

// A leader that answers CodeUnavailable (stopping, nothing acknowledged)
// is asked again until the call's timeout, then the error says why.
func TestCallTCPUnavailable(t *testing.T) {
	m := startMunged(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var calls atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				dec := api.NewDecoder(c)
				if _, err := dec.ReadLine(); err != nil {
					return
				}
				if _, err := dec.ReadLine(); err != nil {
					return
				}
				resp := api.Response{V: api.Version}
				if calls.Add(1) < 3 {
					resp.Error = &api.Error{Code: api.CodeUnavailable, Message: "controller stopping"}
				}
				api.WriteResponse(c, &resp)
			}()
		}
	}()
	target := Target{Servers: []string{ln.Addr().String()}, MungeSocket: m.Socket}
	if _, err := target.Call(context.Background(), api.Request{Op: api.OpStat}); err != nil || calls.Load() != 3 {
		t.Fatalf("err %v after %d calls, want success at the third", err, calls.Load())
	}
}

func TestCallTCPWithTLS(t *testing.T) {
	m := startMunged(t)
	srv, ca := selfSigned(t)
	addr := tcpServer(t, m.Socket, srv)
	env := map[string]string{"SHARQ_SERVER": addr, "SHARQ_MUNGE_SOCKET": m.Socket, "SHARQ_TLS_CA": ca,
		"SHARQ_CONF": filepath.Join(t.TempDir(), "none.toml")}
	target, err := Locate(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if target.TLS == nil || target.Transport() != "TCP "+addr+" (TLS)" {
		t.Fatalf("target %+v", target)
	}
	if _, err := target.Call(context.Background(), api.Request{Op: api.OpShares}); err != nil {
		t.Fatal(err)
	}
	// Without the CA the client refuses the server.
	target.TLS = &tls.Config{}
	if _, err := target.Call(context.Background(), api.Request{Op: api.OpShares}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable (unknown authority)", err)
	}
}

// With TLS and several servers, each server is verified by the host of its
// own address: three controllers whose certificates name only themselves
// all answer, and one whose certificate names another is refused.
func TestCallTCPTLSServerNames(t *testing.T) {
	m := startMunged(t)
	dir := t.TempDir()
	ca := testcert.NewCA(t, dir)
	serve := func(ip, name string) string {
		cert, key := ca.Issue(t, dir, "srv-"+ip+"-"+name, name, name)
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return tcpServerOn(t, ip, m.Socket, &tls.Config{Certificates: []tls.Certificate{pair}})
	}
	env := map[string]string{"SHARQ_SERVER": "127.0.0.1:1", "SHARQ_MUNGE_SOCKET": m.Socket, "SHARQ_TLS_CA": ca.File,
		"SHARQ_CONF": filepath.Join(t.TempDir(), "none.toml")}
	base, err := Locate(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		target := base
		target.Servers = []string{closedAddr(t), serve(ip, ip)} // reached after another server
		if _, err := target.Call(context.Background(), api.Request{Op: api.OpShares}); err != nil {
			t.Errorf("server %s: %v", ip, err)
		}
	}
	target := base
	target.Servers = []string{serve("127.0.0.2", "127.0.0.3")}
	var cerr *tls.CertificateVerificationError
	if _, err := target.Call(context.Background(), api.Request{Op: api.OpShares}); !errors.Is(err, ErrUnreachable) || !errors.As(err, &cerr) {
		t.Fatalf("a certificate naming another host: %v, want a verification failure", err)
	}
}
