package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// waitTCP waits until addr accepts connections.
func waitTCP(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never accepted", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nodeHello says hello to the node port at addr as node and returns the
// answer.
func nodeHello(t *testing.T, addr, node string) api.NodeMsg {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := api.Encode(conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: node, Secret: testSecret,
		Inventory: &api.Inventory{}, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var w api.NodeMsg
	if err := api.NewDecoder(conn).Decode(&w); err != nil {
		t.Fatal(err)
	}
	return w
}

// A follower never names itself: not this process, nor an earlier process
// of this controller (same host, same address) whose election key outlives
// it until its session's TTL, as after a kill -9 and a quick restart.
func TestCurrentLeaderNotSelf(t *testing.T) {
	m := etcdtest.Start(t)
	cli := etcdtest.Client(t, m.ClientURL)
	host, _ := os.Hostname()
	tests := []struct {
		name string
		lead leader.Info
		want string
	}{
		{"another controller", leader.Info{Host: "ctl1", PID: os.Getpid(), Nodes: "ctl1:6820", Clients: "ctl1:6822"}, "ctl1:6822"},
		{"another controller on this host", leader.Info{Host: host, PID: 1, Nodes: "127.0.0.1:7000", Clients: "127.0.0.1:7002"}, "127.0.0.1:7002"},
		{"this controller's earlier process", leader.Info{Host: host, PID: 1, Nodes: "127.0.0.1:6820", Clients: "127.0.0.1:6822"}, ""},
		{"this process", leader.Info{Host: host, PID: os.Getpid(), Nodes: "127.0.0.1:6820", Clients: "127.0.0.1:6822"}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := fmt.Sprintf("/t%d/leader", i)
			b, _ := json.Marshal(tt.lead)
			if _, err := cli.Put(context.Background(), prefix+"/1", string(b)); err != nil {
				t.Fatal(err)
			}
			c := &Controller{etcd: cli, electionPrefix: prefix, nodeAddr: "127.0.0.1:6820",
				log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if got := c.currentLeader(context.Background()).Clients; got != tt.want {
				t.Fatalf("follower names %q, want %q", got, tt.want)
			}
		})
	}
}
