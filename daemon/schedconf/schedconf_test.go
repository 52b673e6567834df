package schedconf_test

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/daemon/schedconf"
)

// TestConfig: every field the core reads comes from the configuration.
func TestConfig(t *testing.T) {
	c, err := conf.Load("../../conf/testdata/good/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	sc := schedconf.Config(c)
	wantP := []sched.Partition{{Name: "a100", PreemptionRetries: 2, NodeFailureRetries: 3, StartFailureRetries: 5, CheckpointsLocal: true,
		DefaultWalltime: 12 * time.Hour, PreemptGrace: time.Minute, MaxPreemptGrace: conf.DefaultMaxPreemptGrace, DefaultImage: "reg.example/img:1", NeverFitsFailAfter: 48 * time.Hour},
		{Name: "cpu", PreemptionRetries: -1, NodeFailureRetries: -1, StartFailureRetries: conf.DefaultStartFailureRetries,
			PreemptGrace: conf.DefaultPreemptGrace, MaxPreemptGrace: conf.DefaultMaxPreemptGrace, DefaultImage: "host"}}
	if !reflect.DeepEqual(sc.Partitions, wantP) {
		t.Errorf("partitions = %+v", sc.Partitions)
	}
	if sc.Backfill {
		t.Error("backfill = false did not reach the core")
	}
	if len(sc.Nodes) != 6 || !reflect.DeepEqual(sc.Nodes[4], sched.Node{Name: "b5", Partition: "a100", GPUs: 2, MemBytes: 1 << 30}) ||
		!reflect.DeepEqual(sc.Nodes[0].Labels, map[string]string{"gpu_type": "a100", "ib": "hdr"}) {
		t.Errorf("nodes = %+v", sc.Nodes)
	}
	wantS := []sched.Share{
		{Name: "x", Partition: "a100", GPUs: 10, Strategy: sched.Reserve, BorrowLimit: -1, InSharePreemption: true},
		{Name: "y", Partition: "a100", GPUs: 8, Strategy: sched.LendAndBorrow, BorrowLimit: 0,
			FairWeight: 3, FairShareUsers: true, MaxRunningJobsPerUser: 4, MaxGPUsPerUser: 6},
		{Name: "z", Partition: "cpu", Strategy: sched.Lend, BorrowLimit: -1},
	}
	if !reflect.DeepEqual(sc.Shares, wantS) {
		t.Errorf("shares = %+v", sc.Shares)
	}
	if sc.FairShare || sc.UsageHalfLife != 36*time.Hour {
		t.Errorf("fair share %v, half-life %v; want false, 36h", sc.FairShare, sc.UsageHalfLife)
	}
	if !sc.FairPreemption || sc.FairPreemptionAfter != 30*time.Minute {
		t.Errorf("fair preemption %v after %v; want true after 30m", sc.FairPreemption, sc.FairPreemptionAfter)
	}
}

// TestEveryGoodConfig: each good configuration of conf's tests converts,
// and the core takes it.
func TestEveryGoodConfig(t *testing.T) {
	files, err := filepath.Glob("../../conf/testdata/good/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("good configurations: %v, %v", files, err)
	}
	for _, f := range files {
		c, err := conf.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := sched.New(schedconf.Config(c)); err != nil {
			t.Errorf("%s: the core refuses it: %v", f, err)
		}
	}
}

// TestTopology: the example's topology and the gpu partition's topology
// keys reach the core, which takes them.
func TestTopology(t *testing.T) {
	c, err := conf.Load("../../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	sc := schedconf.Config(c)
	if p := sc.Partitions[0]; p.Topology != "fabric" || p.DefaultTopologyLevel != "rack" {
		t.Errorf("partition %+v", p)
	}
	if len(sc.Topologies) != 1 || len(sc.Topologies[0].Domains) != 5 ||
		!reflect.DeepEqual(sc.Topologies[0].Domains[2], sched.Domain{Level: "rack", Name: "rack2", Nodes: []string{"gpu05", "gpu06", "gpu07", "gpu08"}}) {
		t.Errorf("topologies %+v", sc.Topologies)
	}
	s, err := sched.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.DomainsOf("gpu", "rack", []string{"gpu01", "gpu16"}); !reflect.DeepEqual(got, []string{"rack1", "rack4"}) {
		t.Errorf("DomainsOf = %v", got)
	}
}

// TestNVLinkGroups: a node's NVLink groups reach the core as each GPU's
// peers.
func TestNVLinkGroups(t *testing.T) {
	c, err := conf.Load("../../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	sc := schedconf.Config(c)
	want := [][]int{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}, {5, 6, 7}, {4, 6, 7}, {4, 5, 7}, {4, 5, 6}}
	if !reflect.DeepEqual(sc.Nodes[0].GPUPeers, want) {
		t.Errorf("gpu01's peers %v, want %v", sc.Nodes[0].GPUPeers, want)
	}
}
