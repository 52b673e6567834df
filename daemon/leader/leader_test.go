package leader_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// fenced tries one write under fence and reports whether it committed.
func fenced(t *testing.T, cli *clientv3.Client, fence []clientv3.Cmp) bool {
	t.Helper()
	resp, err := cli.Txn(context.Background()).If(fence...).Then(clientv3.OpPut("/test/written", "x")).Commit()
	if err != nil {
		t.Fatal(err)
	}
	return resp.Succeeded
}

// The fence must refuse a candidate that still waits, though its own key
// exists with its create revision.
func TestFenceRefusesWaitingCandidate(t *testing.T) {
	m := etcdtest.Start(t)
	cli := etcdtest.Client(t, m.ClientURL)
	ctx := context.Background()
	put := func(key string) int64 {
		lease, err := cli.Grant(ctx, 30)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cli.Put(ctx, key, "{}", clientv3.WithLease(lease.ID))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	const pfx = "/test/election/"
	revA := put(pfx + "a")
	revB := put(pfx + "b")
	tests := []struct {
		name  string
		fence []clientv3.Cmp
		want  bool
	}{
		{"oldest candidate leads", leader.FenceFor(pfx, pfx+"a", revA), true},
		{"waiting candidate is fenced out", leader.FenceFor(pfx, pfx+"b", revB), false},
		// What the fence must not be: this check alone lets the waiting one write.
		{"own key alone would let it write", []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(pfx+"b"), "=", revB)}, true},
		{"wrong revision", leader.FenceFor(pfx, pfx+"a", revA+1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fenced(t, cli, tc.fence); got != tc.want {
				t.Fatalf("fenced write committed = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := cli.Delete(ctx, pfx+"a"); err != nil {
		t.Fatal(err)
	}
	if !fenced(t, cli, leader.FenceFor(pfx, pfx+"b", revB)) {
		t.Fatal("b is the oldest candidate once a is gone, but its fence fails")
	}
	if fenced(t, cli, leader.FenceFor(pfx, pfx+"a", revA)) {
		t.Fatal("a's fence holds after its key was deleted")
	}
}

func TestElection(t *testing.T) {
	m := etcdtest.Start(t)
	ctx := context.Background()
	cliA, cliB := etcdtest.Client(t, m.ClientURL), etcdtest.Client(t, m.ClientURL)
	const pfx = "/test/leader"
	// Leases end here by revoke and resign, never by expiry: the default
	// TTL (5 s, not 1 s) keeps a leading through a renewal delayed on a
	// loaded machine. a learns of the revoke at its next renewal, a third
	// of the TTL later, so a longer one costs test time.
	const ttl = 5 * time.Second
	a, err := leader.Campaign(ctx, cliA, pfx, ttl, leader.Info{Host: "a", Nodes: "a:6820"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Valid() || !fenced(t, cliA, a.Fence()) {
		t.Fatal("the first candidate does not lead")
	}
	won := make(chan *leader.Leader, 1)
	go func() {
		b, err := leader.Campaign(ctx, cliB, pfx, ttl, leader.Info{Host: "b", Nodes: "b:6820"})
		if err != nil {
			t.Error(err)
		}
		won <- b
	}()
	// b waits while a leads; both are listed, a first.
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, err := leader.List(ctx, cliA, pfx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 2 {
			if !cs[0].Leader || cs[0].Info.Host != "a" || cs[1].Leader || cs[1].Info.Host != "b" || cs[0].Epoch != a.Epoch() {
				t.Fatalf("candidates = %+v", cs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never became a candidate: %+v", cs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-won:
		t.Fatal("b won while a leads")
	case <-time.After(200 * time.Millisecond):
	}
	// a's lease is revoked behind its back (as when it expires): a learns
	// it lost, its fence fails, b takes over with a higher epoch.
	if _, err := cliB.Revoke(ctx, sessionLease(t, cliB, a.Key())); err != nil {
		t.Fatal(err)
	}
	var b *leader.Leader
	select {
	case b = <-won:
	case <-time.After(10 * time.Second):
		t.Fatal("b did not take over after a's lease ended")
	}
	select {
	case <-a.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a did not see its session end")
	}
	if a.Valid() || fenced(t, cliA, a.Fence()) {
		t.Fatal("a still passes as leader")
	}
	if b.Epoch() <= a.Epoch() || !fenced(t, cliB, b.Fence()) {
		t.Fatalf("b: epoch %d after %d, fence holds %v", b.Epoch(), a.Epoch(), fenced(t, cliB, b.Fence()))
	}
	// Resign hands over at once.
	start := time.Now()
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if fenced(t, cliB, b.Fence()) {
		t.Fatal("b's fence holds after it resigned")
	}
	if cs, err := leader.List(ctx, cliA, pfx); err != nil || len(cs) != 0 {
		t.Fatalf("after resign: %+v %v", cs, err)
	}
	t.Logf("resign took %v", time.Since(start))
}

func sessionLease(t *testing.T, cli *clientv3.Client, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := cli.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %v", key, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}
