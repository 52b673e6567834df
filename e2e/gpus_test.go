//go:build !unit

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// probeScript tries to open every fake GPU of the node and prints one line
// per device: "own" when the open reached the (absent) driver, i.e. the
// device cgroup allowed it; "absent" when the node is not in the
// container; "denied" when the cgroup refused it.
func probeScript() string {
	var b strings.Builder
	b.WriteString("echo CVD=$CUDA_VISIBLE_DEVICES\n")
	for i, d := range gpuDevs[:8] {
		fmt.Fprintf(&b, `if [ ! -e %[1]s ]; then echo %[2]d absent
elif cat %[1]s 2>&1 | grep -q "No such device or address"; then echo %[2]d own
else echo %[2]d denied; fi
`, d, i)
	}
	// The job asked the NVIDIA toolkit for more than its GPUs (qsub -v):
	// its environment must not carry the request.
	b.WriteString("echo asks=$NVIDIA_MIG_MONITOR_DEVICES$NVIDIA_GDRCOPY\n")
	b.WriteString("sleep 3\n")
	return b.String()
}

func TestGPUPinning(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("probe.sh", probeScript())
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, c.qsub("-q", "b", "-N", fmt.Sprintf("p%d", i), "-l", "ngpus=2",
			"-v", "NVIDIA_MIG_MONITOR_DEVICES=all,NVIDIA_GDRCOPY=enabled", "probe.sh"))
	}
	// All four run at once (8 GPUs, 2 each).
	c.eventually(30*time.Second, func() (bool, string) {
		out, _, _ := c.runAs(alice, "qstat")
		return strings.Count(out, " R ") == 4, out
	})
	seen := map[string]bool{}
	for i, id := range ids {
		c.waitState(id, "F", 30*time.Second)
		out := c.readFile(fmt.Sprintf("p%d.o%s", i, strings.TrimSuffix(id, ".e2e")))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 10 {
			t.Fatalf("job %s output:\n%s", id, out)
		}
		if lines[9] != "asks=" {
			t.Fatalf("job %s kept its request to the NVIDIA toolkit for more than its GPUs: %q", id, lines[9])
		}
		var own []string
		for _, l := range lines[1:9] {
			idx, what, _ := strings.Cut(l, " ")
			switch what {
			case "own":
				own = append(own, idx)
			case "absent", "denied":
			default:
				t.Fatalf("job %s: line %q", id, l)
			}
		}
		cvd := strings.TrimPrefix(lines[0], "CVD=")
		if len(own) != 2 || cvd != strings.Join(own, ",") {
			t.Fatalf("job %s sees GPUs %v with CUDA_VISIBLE_DEVICES=%q", id, own, cvd)
		}
		exec := c.field(id, "exec_host")
		for _, g := range own {
			if seen[g] {
				t.Fatalf("GPU %s given to two jobs", g)
			}
			seen[g] = true
		}
		_ = exec
	}
	var all []string
	for g := range seen {
		all = append(all, g)
	}
	slices.Sort(all)
	if strings.Join(all, "") != "01234567" {
		t.Fatalf("GPUs used: %v", all)
	}
}
