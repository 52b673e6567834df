//go:build !unit

package noded_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/conf"
)

// The node confines jobs as its partition says, and reports a memory
// kill as "OOM killed" with the exit.
func TestPartitionConfinementAndOOM(t *testing.T) {
	e := newEnv(t)
	e.cfg.Partitions = []conf.Partition{{Name: "p", Nodes: []string{"n1"}, PidsLimit: 40, Network: conf.NetworkNone}}
	e.run(t, "n1")
	p := e.ctl.accept(t)

	o := e.order(t, "50.t", `(for i in $(seq 200); do sleep 1000 & done) 2>/dev/null
set -- /proc/[0-9]*
echo procs=$#
unshare -U true; echo userns=$?
set -- /sys/class/net/*
echo nets=$*`)
	p.start(t, o)
	if x := p.state(t, "50.t", "exited"); x.ExitStatus != 0 || x.Error != "" {
		t.Fatalf("confined job: exit %d %q", x.ExitStatus, x.Error)
	}
	out := readFile(t, e.workFile("50.t", "out"))
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(l, "=")
		bad := false
		switch k {
		case "procs":
			n, err := strconv.Atoi(v)
			bad = err != nil || n > 40
		case "userns":
			bad = v == "0"
		case "nets":
			bad = v != "/sys/class/net/lo"
		}
		if bad {
			t.Errorf("confinement: %s (output %q)", l, out)
		}
	}

	o = e.order(t, "51.t", "dd if=/dev/zero of=/dev/null bs=512M count=1")
	o.Job.Resources.MemPerNode = 64 << 20
	p.start(t, o)
	x := p.state(t, "51.t", "exited")
	if x.ExitStatus != 137 || x.Error != "OOM killed" {
		t.Errorf("job over its memory limit: exit %d %q, want 137 \"OOM killed\"", x.ExitStatus, x.Error)
	}
}
