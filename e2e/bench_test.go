//go:build !unit

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// jobRecord reads a job's full record (qstat -f -F sharq-json).
func (c *cluster) jobRecord(id string) api.Job {
	c.t.Helper()
	out, errOut, err := c.runAs(0, "qstat", "-f", "-F", "sharq-json", "-x", id)
	must(c.t, err)
	var doc struct {
		Jobs map[string]api.Job `json:"Jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		c.t.Fatalf("qstat json: %v\n%s%s", err, out, errOut)
	}
	j, ok := doc.Jobs[id]
	if !ok {
		c.t.Fatalf("qstat json lacks %s", id)
	}
	return j
}

// mtime waits for a file the job touches and returns when it was written:
// the job's own clock, to the nanosecond, without a date command that has
// no %N in busybox.
func (c *cluster) mtime(name string, d time.Duration) time.Time {
	c.t.Helper()
	p := filepath.Join(c.workdir, name)
	deadline := time.Now().Add(d)
	for {
		if st, err := os.Stat(p); err == nil {
			return st.ModTime()
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s never appeared\n%s", name, c.logs)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// BenchmarkSubmitToStart: from running qsub to the job's first instruction
// on an idle node, split into the controller's share (submission to start
// order, its own clock) and the rest (order to the node, sharqd, containerd,
// runc, the shell).
func BenchmarkSubmitToStart(b *testing.B) {
	c := newCluster(b, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("first.sh", ": > started.$PBS_JOBID\n")
	var total, ctl time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		id := c.qsub("-q", "a", "-l", "ngpus=1", "first.sh")
		first := c.mtime("started."+id, 30*time.Second)
		c.waitState(id, "F", 30*time.Second)
		j := c.jobRecord(id)
		total += first.Sub(t0)
		ctl += j.StartTime.Sub(j.SubmitTime)
	}
	n := float64(b.N)
	b.ReportMetric(float64(total.Milliseconds())/n, "ms-to-first-instruction")
	b.ReportMetric(float64(ctl.Microseconds())/n/1000, "ms-controller")
	b.ReportMetric(float64((total-ctl).Milliseconds())/n, "ms-node+containerd")
}

// BenchmarkReclaimToSIGTERM: from the owner's qsub to SIGTERM reaching the
// borrowing job, split as above (the controller's share ends when it
// records the preemption and sends the stop order).
func BenchmarkReclaimToSIGTERM(b *testing.B) {
	c := newCluster(b, spec{nodes: []string{"n1"}, shares: openShares, grace: "30s"})
	c.script("borrow.sh", "trap ': > term.$PBS_JOBID; exit 0' TERM\n: > up.$PBS_JOBID\nwhile true; do sleep 1; done\n")
	c.script("owner.sh", "true\n")
	var total, ctl time.Duration
	for i := 0; i < b.N; i++ {
		borrower := c.qsub("-q", "b", "-l", "ngpus=8", "borrow.sh")
		c.mtime("up."+borrower, 30*time.Second)
		t0 := time.Now()
		owner := c.qsub("-q", "a", "-l", "ngpus=4", "owner.sh")
		term := c.mtime("term."+borrower, 30*time.Second)
		total += term.Sub(t0)
		j := c.jobRecord(borrower)
		o := c.jobRecord(owner)
		for _, h := range j.History {
			if strings.HasPrefix(h.What, "preempted") {
				ctl += h.Time.Sub(o.SubmitTime)
				break
			}
		}
		c.waitState(owner, "F", 30*time.Second)
		c.runAs(alice, "qdel", borrower)
		c.waitState(borrower, "F", 30*time.Second)
	}
	n := float64(b.N)
	b.ReportMetric(float64(total.Milliseconds())/n, "ms-to-SIGTERM")
	b.ReportMetric(float64(ctl.Microseconds())/n/1000, "ms-controller")
	b.ReportMetric(float64((total-ctl).Milliseconds())/n, "ms-node+containerd")
}
