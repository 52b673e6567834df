//go:build !unit

package ctld

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// A follower (a second controller waiting in its campaign) answers on its
// client and node ports with the leader's addresses from the election; it
// neither checks nor consumes the credential, so the same request then
// succeeds at the leader. Once it leads, the same ports serve for real.
func TestHAFollowerAnswers(t *testing.T) {
	m := etcdtest.Start(t)
	ha := haTOML(m.ClientURL)
	mg := startMunged(t, "")
	aClients, bClients := freeAddr(t), freeAddr(t)
	keys := func(addr string) string {
		return "spool = \"etcd\"\nclient_listen = \"" + addr + "\"\nmunge_socket = \"" + mg.Socket + "\""
	}
	a := newTestClusterWith(t, []string{"n1:8"}, twoShares+ha, keys(aClients))

	b := prepareTestCluster(t, []string{"n1:8"}, twoShares+ha, keys(bClients), Limits{})
	bctx, bcancel := context.WithCancel(context.Background())
	t.Cleanup(bcancel)
	bNew := make(chan *Controller, 1)
	go func() {
		c, err := New(bctx, Options{ConfigPath: b.conf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Errorf("b: %v", err)
		}
		bNew <- c
	}()
	waitTCP(t, bClients)
	waitTCP(t, b.listen)

	ok := submitLine(t, "via-follower")
	cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, mg.Socket, remoteUID, api.RequestPayload(ok), 300)})
	tests := []struct {
		name   string
		addr   string
		code   string
		leader string
	}{
		{"follower names the leader", bClients, api.CodeNotLeader, aClients},
		{"the same credential then works at the leader", aClients, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := remoteCall(t, tt.addr, cred, ok)
			switch {
			case tt.code == "" && (resp.Error != nil || resp.JobID == ""):
				t.Fatalf("answer %+v, want a job id", resp.Error)
			case tt.code != "" && (resp.Error == nil || resp.Error.Code != tt.code || resp.Error.Leader != tt.leader):
				t.Fatalf("answer %+v, want %s naming %s", resp.Error, tt.code, tt.leader)
			}
		})
	}
	if n := len(a.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}).Jobs); n != 1 {
		t.Fatalf("the leader has %d jobs, want the 1 sent through the follower's answer", n)
	}

	// A node that dials the follower is told where the leader is.
	w := nodeHello(t, b.listen, "n1")
	if w.Type != api.MsgWelcome || !w.NotLeader || w.Leader != a.listen || w.Error == "" {
		t.Fatalf("follower's welcome %+v, want not_leader naming %s", w, a.listen)
	}

	// a resigns; b leads on the ports it had open and serves the job.
	a.stop()
	var c *Controller
	select {
	case c = <-bNew:
	case <-time.After(15 * time.Second):
		t.Fatal("b did not take over")
	}
	if c == nil {
		t.FailNow()
	}
	b.ctl, b.cancel, b.done = c, bcancel, make(chan error, 1)
	go func() { b.done <- c.Run(bctx) }()
	t.Cleanup(b.stop)
	waitSocket(t, b.sock)
	stat := line(t, api.Request{V: api.Version, Op: api.OpStat, Stat: &api.StatFilter{}})
	resp := remoteCall(t, bClients, line(t, api.Credential{V: api.Version,
		Munge: credentialAs(t, mg.Socket, remoteUID, api.RequestPayload(stat), 300)}), stat)
	if resp.Error != nil || len(resp.Jobs) != 1 || resp.Jobs[0].Name != "via-follower" {
		t.Fatalf("new leader's answer on its client port: %+v, %d jobs", resp.Error, len(resp.Jobs))
	}
	if w := nodeHello(t, b.listen, "n1"); w.NotLeader || w.Error != "" {
		t.Fatalf("new leader's welcome %+v", w)
	}
}
