package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

// tcpServer is the controller's side of the TCP client port, cut down: it
// checks the credential against the request line with the real munged and
// answers with the caller's uid in Text.
func tcpServer(t *testing.T, mungeSocket string, cfg *tls.Config) string {
	t.Helper()
	return tcpServerOn(t, "127.0.0.1", mungeSocket, cfg)
}

// tcpServerOn is tcpServer listening on ip.
func tcpServerOn(t *testing.T, ip, mungeSocket string, cfg *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				dec := api.NewDecoder(c)
				credLine, err1 := dec.ReadLine()
				reqLine, err2 := dec.ReadLine()
				if err1 != nil || err2 != nil {
					return
				}
				var cl api.Credential
				json.Unmarshal(credLine, &cl)
				cred, err := munge.Decode(context.Background(), mungeSocket, cl.Munge)
				resp := api.Response{V: api.Version}
				switch {
				case err != nil:
					resp.Error = &api.Error{Code: api.CodeAuth, Message: err.Error()}
				case !bytes.Equal(cred.Payload, api.RequestPayload(reqLine)):
					resp.Error = &api.Error{Code: api.CodeAuth, Message: "payload does not match"}
				default:
					resp.Text = strings.TrimSpace(string(reqLine))
				}
				api.WriteResponse(c, &resp)
			}()
		}
	}()
	return ln.Addr().String()
}

// silentServer accepts connections and reads, but never answers, as a
// SIGSTOPped controller does (the kernel accepts for it).
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()
	return ln.Addr().String()
}

// followerServer answers every request as a follower controller does:
// CodeNotLeader naming leader ("" = none known).
func followerServer(t *testing.T, leader string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serveFollower(ln, func() string { return leader })
	return ln.Addr().String()
}

// selfFollower is a follower that names itself as the leader.
func selfFollower(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addr := ln.Addr().String()
	go serveFollower(ln, func() string { return addr })
	return addr
}

func serveFollower(ln net.Listener, leader func() string) {
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
			api.WriteResponse(c, &api.Response{V: api.Version, Error: &api.Error{Code: api.CodeNotLeader,
				Message: "the leader is at " + leader(), Leader: leader()}})
		}()
	}
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// lossyServer reads each request; it drops the connection without an
// answer for the first lose requests (a leader killed while answering),
// then answers as tcpServer does. It records each credential and request
// line it read.
type lossyServer struct {
	addr  string
	mu    sync.Mutex
	lose  int
	creds []string
	reqs  []string
}

func newLossyServer(t *testing.T, mungeSocket string, lose int) *lossyServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ls := &lossyServer{addr: ln.Addr().String(), lose: lose}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				dec := api.NewDecoder(c)
				credLine, err1 := dec.ReadLine()
				reqLine, err2 := dec.ReadLine()
				if err1 != nil || err2 != nil {
					return
				}
				ls.mu.Lock()
				ls.creds, ls.reqs = append(ls.creds, string(credLine)), append(ls.reqs, string(reqLine))
				drop := len(ls.reqs) <= ls.lose
				ls.mu.Unlock()
				if drop {
					return
				}
				var cl api.Credential
				json.Unmarshal(credLine, &cl)
				resp := api.Response{V: api.Version, Text: strings.TrimSpace(string(reqLine))}
				if _, err := munge.Decode(context.Background(), mungeSocket, cl.Munge); err != nil {
					resp = api.Response{V: api.Version, Error: &api.Error{Code: api.CodeAuth, Message: err.Error()}}
				}
				api.WriteResponse(c, &resp)
			}()
		}
	}()
	return ls
}

// selfSigned is the server config of a self-signed certificate for
// 127.0.0.1 (its own CA) and the PEM path clients trust it by.
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	cert, key := testcert.SelfSigned(t, t.TempDir())
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}, cert
}

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "here.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	base := "[cluster]\nname = \"x\"\nclient_listen = \":6818\"\ncontroller = \"ctl01:6820\"\nmunge_socket = \"/run/m/sock\"\n"
	tail := "\n[[partition]]\nname = \"gpu\"\nnodes = \"n1\"\n[[node]]\nnames = \"n1\"\ngpus = 1\n[[share]]\nname = \"all\"\npartition = \"gpu\"\ngpus = 1\nusers = [\"*\"]\n"
	write := func(name, cluster string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(base+cluster+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onController := write("controller.toml", "socket = \""+sock+"\"\n")
	onLogin := write("login.toml", "socket = \""+filepath.Join(dir, "absent.sock")+"\"\n")
	noPort := filepath.Join(dir, "noport.toml")
	os.WriteFile(noPort, []byte("[cluster]\nname = \"x\"\nsocket = \""+filepath.Join(dir, "absent.sock")+"\"\n"+tail), 0o644)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[cluster]\nname = 3\n"), 0o644)
	missing := filepath.Join(dir, "missing.toml")
	// Only [cluster] is read (conf.LoadCluster): the rest, even wrong, costs
	// a client nothing; the controller checks it.
	clusterOnly := filepath.Join(dir, "clusteronly.toml")
	os.WriteFile(clusterOnly, []byte(base+"socket = \""+sock+"\"\n[[share]]\nname = \"all\"\ngpus = \"many\"\n"), 0o644)

	tests := []struct {
		name    string
		env     map[string]string
		socket  string
		servers []string
		munge   string
		from    string
		wantErr error
	}{
		{"SHARQ_SERVER list", map[string]string{"SHARQ_SERVER": "a:1, b:2", "SHARQ_CONF": onLogin}, "", []string{"a:1", "b:2"}, "/run/m/sock", "SHARQ_SERVER", nil},
		{"SHARQ_SERVER without config", map[string]string{"SHARQ_SERVER": "a:1", "SHARQ_CONF": missing, "SHARQ_MUNGE_SOCKET": "/m"}, "", []string{"a:1"}, "/m", "SHARQ_SERVER", nil},
		{"SHARQ_SOCKET", map[string]string{"SHARQ_SOCKET": "/s.sock", "SHARQ_CONF": onLogin}, "/s.sock", nil, "", "SHARQ_SOCKET", nil},
		{"controller host: its socket", map[string]string{"SHARQ_CONF": onController}, sock, nil, "", onController, nil},
		{"login host: TCP from the config", map[string]string{"SHARQ_CONF": onLogin, "SHARQ_MUNGE_SOCKET": "/m2"}, "", []string{"ctl01:6818"}, "/m2", onLogin, nil},
		{"no client port: the socket", map[string]string{"SHARQ_CONF": noPort}, filepath.Join(dir, "absent.sock"), nil, "", noPort, nil},
		{"only [cluster] is read", map[string]string{"SHARQ_CONF": clusterOnly}, sock, nil, "", clusterOnly, nil},
		{"named config missing", map[string]string{"SHARQ_CONF": missing}, "", nil, "", "", ErrConfig},
		{"bad config", map[string]string{"SHARQ_CONF": bad}, "", nil, "", "", ErrConfig},
		{"bad config with SHARQ_SERVER", map[string]string{"SHARQ_SERVER": "a:1", "SHARQ_CONF": bad}, "", nil, "", "", ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Locate(func(k string) string { return tt.env[k] })
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Socket != tt.socket || strings.Join(got.Servers, ",") != strings.Join(tt.servers, ",") ||
				len(tt.servers) > 0 && got.MungeSocket != tt.munge || got.From != tt.from {
				t.Errorf("got %+v", got)
			}
		})
	}
}
