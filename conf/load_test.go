package conf

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.want from the current output")

// Each bad file's problems must match its .want file line for line.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".toml"), func(t *testing.T) {
			_, err := Load(f)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Load(%s) = %v, want Problems", f, err)
			}
			got := ps.Error() + "\n"
			wantFile := strings.TrimSuffix(f, ".toml") + ".want"
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("problems differ\n--- got\n%s--- want\n%s", got, want)
			}
			for _, p := range ps {
				if p.File != f {
					t.Errorf("problem %q has file %q, want %q", p.Msg, p.File, f)
				}
			}
		})
	}
}

func TestGoodConfigs(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, c *Config)
	}{
		{"minimal.toml", func(t *testing.T, c *Config) {
			want := Cluster{
				Name:               "mini",
				SpoolDir:           DefaultSpoolDir,
				Socket:             DefaultSocket,
				Listen:             DefaultListen,
				Controller:         "127.0.0.1:6820",
				Admins:             []string{"root"},
				SecretFile:         DefaultSecretFile,
				HeartbeatInterval:  5 * time.Second,
				NodeTimeout:        30 * time.Second,
				JobLease:           2 * time.Minute,
				History:            168 * time.Hour,
				CheckpointRoot:     DefaultCheckpointRoot,
				Spool:              SpoolBolt,
				Controllers:        []string{"127.0.0.1:6820"},
				MungeSocket:        DefaultMungeSocket,
				SessionListen:      DefaultSessionListen,
				MaxJobBytesPerUser: DefaultMaxJobBytesPerUser,
			}
			if !reflect.DeepEqual(c.Cluster, want) {
				t.Errorf("cluster\n got %+v\nwant %+v", c.Cluster, want)
			}
			if c.Runtime != (Runtime{DefaultContainerdSocket, "sharq", DefaultClientBinDir, "", DefaultHealthCheckInterval, DefaultGPUSampleInterval}) {
				t.Errorf("runtime = %+v", c.Runtime)
			}
			wantP := []Partition{{Name: "gpu", Nodes: []string{"n1", "n2"}, PreemptGrace: 30 * time.Second, MaxPreemptGrace: time.Hour, PreemptionRetries: -1,
				NodeFailureRetries: -1, StartFailureRetries: DefaultStartFailureRetries, PidsLimit: DefaultPidsLimit, Network: NetworkHost, Interactive: true}}
			if !reflect.DeepEqual(c.Partitions, wantP) {
				t.Errorf("partitions = %+v", c.Partitions)
			}
			devs := []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}
			extra := []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
			wantN := []Node{
				{Name: "n1", Partition: "gpu", GPUs: 4, GPUDevices: devs, ExtraDevices: extra, CheckpointRoot: DefaultCheckpointRoot},
				{Name: "n2", Partition: "gpu", GPUs: 4, GPUDevices: devs, ExtraDevices: extra, CheckpointRoot: DefaultCheckpointRoot},
			}
			if !reflect.DeepEqual(c.Nodes, wantN) {
				t.Errorf("nodes = %+v", c.Nodes)
			}
			wantS := []Share{{Name: "all", Partition: "gpu", GPUs: 8, Strategy: policy.LendAndBorrow, BorrowLimit: -1,
				Users: []string{"*"}, Enabled: true, PriorityDefault: 100}}
			if !reflect.DeepEqual(c.Shares, wantS) {
				t.Errorf("shares = %+v", c.Shares)
			}
			if c.Scheduler != (Scheduler{FairShare: true, UsageHalfLife: policy.DefaultUsageHalfLife, Backfill: true,
				FairPreemption: DefaultFairPreemption, FairPreemptionAfter: DefaultFairPreemptionAfter}) {
				t.Errorf("scheduler = %+v, want fair share with the default half-life, backfill", c.Scheduler)
			}
		}},
		{"etcd.toml", func(t *testing.T, c *Config) {
			want := Etcd{Endpoints: []string{"https://e1:2379", "https://e2:2379", "https://e3:2379"},
				Prefix: "/sharq/ha/", SessionTTL: 5 * time.Second, Timeout: 2 * time.Second,
				TLSCert: "/etc/sharq/etcd.pem", TLSKey: "/etc/sharq/etcd-key.pem", TLSCA: "/etc/sharq/etcd-ca.pem",
				MaxTxnOps: 128, MaxRequestBytes: 3 << 19}
			if !reflect.DeepEqual(c.Etcd, want) || !c.Etcd.TLS() {
				t.Errorf("etcd\n got %+v\nwant %+v", c.Etcd, want)
			}
			if c.Cluster.Spool != SpoolEtcd || !reflect.DeepEqual(c.Cluster.Controllers, []string{"ctl1:6820", "ctl2:6820", "ctl3:6820"}) {
				t.Errorf("cluster spool %q controllers %v", c.Cluster.Spool, c.Cluster.Controllers)
			}
		}},
		{"full.toml", func(t *testing.T, c *Config) {
			cl := c.Cluster
			if cl.Name != "big-0" || cl.Listen != "[::]:7000" || cl.Controller != "[::1]:7000" ||
				cl.Metrics != ":9120" || cl.History != 36*time.Hour || cl.NodeTimeout != time.Minute || cl.JobLease != 5*time.Minute ||
				cl.HeartbeatInterval != 2*time.Second || !cl.TLS() || cl.TLSCA != "/srv/tls/ca.pem" || cl.DefaultShare != "x" ||
				!reflect.DeepEqual(cl.Admins, []string{"ops", "@wheel", "svc_sharq$"}) ||
				cl.ClientListen != "[::]:7001" || !reflect.DeepEqual(cl.Servers, []string{"[::1]:7001"}) ||
				!cl.ClientTLS || cl.MungeSocket != "/srv/munge/munge.socket" || cl.MaxQueuedJobsPerUser != 5000 ||
				cl.MaxJobBytesPerUser != 256<<20 {
				t.Errorf("cluster = %+v", cl)
			}
			if c.Runtime.Namespace != "k8s.io" || c.Runtime.HealthCheck != "/usr/sbin/nhc" || c.Runtime.HealthCheckInterval != 2*time.Minute || c.Runtime.GPUSampleInterval != 10*time.Second {
				t.Errorf("runtime = %+v", c.Runtime)
			}
			p := c.Partition("a100")
			if p == nil || !reflect.DeepEqual(p.Nodes, []string{"a1", "a2", "a3", "a7", "b5"}) ||
				p.PreemptGrace != time.Minute || p.MaxWalltime != 72*time.Hour || p.PreemptionRetries != 2 ||
				p.DefaultImage != "reg.example/img:1" || p.PidsLimit != 512 || !p.AllowUserNamespaces || p.Network != NetworkNone ||
				p.DefaultNCPUs != 12 || p.DefaultMemPerGPU != 100<<30 || p.DefaultMemPerCPU != 3<<30 ||
				p.IdleThreshold != 10 || p.IdleAfter != 2*time.Hour || p.IdleAction != IdleActionRequeue || !p.IdleActionInQuota {
				t.Errorf("a100 = %+v", p)
			}
			if s := c.Share("y"); s == nil || s.MaxQueuedJobsPerUser != 200 {
				t.Errorf("share y's max_queued_jobs_per_user: %+v", s)
			}
			if p := c.Partition("cpu"); p.PidsLimit != DefaultPidsLimit || p.AllowUserNamespaces || p.Network != NetworkHost {
				t.Errorf("cpu partition's confinement defaults: %+v", p)
			}
			var names []string
			for _, n := range c.Nodes {
				names = append(names, n.Name+"@"+n.Partition)
			}
			if want := []string{"a1@a100", "a2@a100", "a3@a100", "a7@a100", "b5@a100", "c01@cpu"}; !reflect.DeepEqual(names, want) {
				t.Errorf("nodes = %v, want %v", names, want)
			}
			if got := c.PartitionLabels("a100"); !reflect.DeepEqual(got, map[string][]string{"gpu_type": {"a100"}, "ib": {"hdr"}}) {
				t.Errorf("a100 labels = %v", got)
			}
			if n := c.Node("a7"); n.GPUDevices[0] != "/dev/nvidia3" || n.MemBytes != 512<<30 || n.CPUs != 64 || n.Labels["gpu_type"] != "a100" ||
				!reflect.DeepEqual(n.ExtraDevices, []string{"/dev/nvidiactl"}) {
				t.Errorf("a7 = %+v", n)
			}
			if n := c.Node("b5"); n.MemBytes != 1<<30 || !reflect.DeepEqual(n.GPUDevices, []string{"/dev/dri/card1", "/dev/dri/card2"}) {
				t.Errorf("b5 = %+v", n)
			}
			if n := c.Node("c01"); n.GPUs != 0 || len(n.GPUDevices) != 0 || n.CPUs != 8 {
				t.Errorf("c01 = %+v", n)
			}
			if !reflect.DeepEqual(cl.Mounts, []Mount{{Path: "/home"}, {Path: "/datasets", ReadOnly: true}}) {
				t.Errorf("cluster mounts = %v", cl.Mounts)
			}
			if !p.HostImage || !p.CheckpointsLocal || !reflect.DeepEqual(p.Mounts, []Mount{{Path: "/scratch/a100"}, {Path: "/sw", ReadOnly: true}}) {
				t.Errorf("a100 = %+v", p)
			}
			if cpu := c.Partition("cpu"); cpu.DefaultImage != HostImage || !cpu.HostImage || cpu.CheckpointsLocal {
				t.Errorf("cpu = %+v", cpu)
			}
			wantM := []Mount{{Path: "/home"}, {Path: "/datasets", ReadOnly: true}, {Path: "/sw", ReadOnly: true}, {Path: "/scratch/a100"}}
			if got := c.JobMounts("a100"); !reflect.DeepEqual(got, wantM) {
				t.Errorf("JobMounts(a100) = %v, want %v", got, wantM)
			}
			if n := c.Node("a1"); n.CheckpointRoot != "/local/ckpt" {
				t.Errorf("a1 checkpoint root %q", n.CheckpointRoot)
			}
			if n := c.Node("c01"); n.CheckpointRoot != "/srv/ckpt" {
				t.Errorf("c01 checkpoint root %q", n.CheckpointRoot)
			}
			if got := c.PartitionGPUs("a100"); got != 18 {
				t.Errorf("PartitionGPUs(a100) = %d", got)
			}
			x, y, z := c.Share("x"), c.Share("y"), c.Share("z")
			if x.Enabled || x.Strategy != policy.Reserve || !x.InSharePreemption || x.PriorityDefault != 0 {
				t.Errorf("x = %+v", x)
			}
			if y.BorrowLimit != 0 || y.PriorityDefault != 9999 || len(y.Users) != 0 {
				t.Errorf("y = %+v", y)
			}
			if z.Partition != "cpu" || z.GPUs != 0 || z.Strategy != policy.Lend {
				t.Errorf("z = %+v", z)
			}
		}},
		{"inline.toml", func(t *testing.T, c *Config) {
			if c.Cluster.Name != "inl" || c.Cluster.NodeTimeout != 3*time.Second || c.Cluster.JobLease != 2*time.Minute || c.Runtime.Namespace != "ns-1" {
				t.Errorf("cluster = %+v, runtime = %+v", c.Cluster, c.Runtime)
			}
			if len(c.Nodes) != 2 || c.Nodes[1].Partition != "p" || !reflect.DeepEqual(c.Nodes[0].ExtraDevices, []string{"/dev/a", "/dev/b"}) {
				t.Errorf("nodes = %+v", c.Nodes)
			}
			if s := c.Share("s"); s == nil || s.Partition != "p" {
				t.Errorf("share s = %+v (partition defaults to the only one)", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".toml"), func(t *testing.T) {
			path := filepath.Join("testdata/good", tt.file)
			c, err := Load(path)
			if err != nil {
				t.Fatalf("Load:\n%v", err)
			}
			if c.File != path {
				t.Errorf("File = %q, want %q", c.File, path)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want os.ErrNotExist", err)
	}
	var ps Problems
	if errors.As(err, &ps) {
		t.Errorf("a missing file is not a Problems error")
	}
}

func TestParseFileName(t *testing.T) {
	_, err := Parse("", []byte("x = "))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].File != "<config>" || ps[0].Line != 1 {
		t.Fatalf("err = %#v", err)
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"line and col", Problem{"a.toml", 3, 7, "bad"}, "a.toml:3:7: bad"},
		{"line only", Problem{"a.toml", 3, 0, "bad"}, "a.toml:3: bad"},
		{"no place", Problem{"a.toml", 0, 0, "bad"}, "a.toml: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	ps := Problems{{"f", 1, 2, "x"}, {"f", 4, 0, "y"}}
	if got, want := ps.Error(), "f:1:2: x\nf:4: y"; got != want {
		t.Errorf("Problems.Error() = %q, want %q", got, want)
	}
}

func TestLookupsUnknown(t *testing.T) {
	c, err := Load("testdata/good/minimal.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Partition("nope") != nil || c.Share("nope") != nil || c.Node("nope") != nil {
		t.Error("lookups of unknown names must give nil")
	}
	c.Share("all").GPUs = 3
	if c.Shares[0].GPUs != 3 {
		t.Error("Share must point into Config.Shares")
	}
}

func TestControllerFor(t *testing.T) {
	tests := []struct{ listen, want string }{
		{"0.0.0.0:6820", "127.0.0.1:6820"},
		{":6820", "127.0.0.1:6820"},
		{"[::]:6820", "[::1]:6820"},
		{"10.0.0.1:6820", "10.0.0.1:6820"},
		{"ctl01:1", "ctl01:1"},
	}
	for _, tt := range tests {
		t.Run(tt.listen, func(t *testing.T) {
			if got := controllerFor(tt.listen); got != tt.want {
				t.Errorf("controllerFor(%q) = %q, want %q", tt.listen, got, tt.want)
			}
		})
	}
}
