//go:build !unit

package noded_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/noded"
)

// nodeFollower answers every hello as a follower controller does: a
// refusing welcome that names leader ("" = none known). It counts hellos.
func nodeFollower(t *testing.T, leader string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var hellos atomic.Int32
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				var hello api.NodeMsg
				if api.NewDecoder(nc).Decode(&hello) != nil || hello.Type != api.MsgHello {
					return
				}
				hellos.Add(1)
				api.Encode(nc, api.NodeMsg{V: api.NodeVersion, Type: api.MsgWelcome, NotLeader: true, Leader: leader,
					Error: "not the leader: the leader is at " + leader})
			}()
		}
	}()
	return ln.Addr().String(), &hellos
}

// A node whose first controller is a follower goes straight to the leader
// the follower names, skipping the rest of its list and its backoff.
func TestFollowsNotLeader(t *testing.T) {
	e := newEnv(t)
	leader := e.ctl.addr()
	first, firstHellos := nodeFollower(t, leader)
	second, secondHellos := nodeFollower(t, "")
	e.cfg.Cluster.Controllers = []string{first, second, leader}
	e.run(t, "n1", func(o *noded.Options) { o.MinBackoff, o.MaxBackoff = time.Minute, time.Minute })
	select {
	case p := <-e.ctl.peers:
		if p.hello.Node != "n1" {
			t.Fatalf("hello from %q", p.hello.Node)
		}
	case <-time.After(waitLimit):
		t.Fatal("the node never reached the leader")
	}
	if firstHellos.Load() != 1 || secondHellos.Load() != 0 {
		t.Fatalf("hellos: %d to the follower that named the leader, %d to the next one; want 1 and 0",
			firstHellos.Load(), secondHellos.Load())
	}
}
