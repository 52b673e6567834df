//go:build !unit

package ctld

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/cli/usageplot"
	"github.com/sharq-hpc/sharq/client"
)

// bob is a second user (alice is in ids_test.go).
var bob = Identity{UID: 1001, GID: 1001, User: "bob"}

// runJob submits, starts and ends one job, returning its id.
func (tc *testCluster) runJob(n *scriptedNode, who Identity, share string, gpus, status int) string {
	tc.t.Helper()
	id := tc.submitAs(who, share, gpus)
	n.expect(api.MsgStart)
	time.Sleep(5 * time.Millisecond)
	n.report(id, 0, "exited", status)
	n.expect(api.MsgRemove)
	tc.waitState(id, api.StateFinished)
	return id
}

// sharqctl runs the real command line against the test controller.
func (tc *testCluster) sharqctl(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	sys := &cli.Sys{Stdout: &out, Stderr: &errb, Now: time.Now, Location: time.UTC, Call: client.Caller(tc.sock), PlotUsage: usageplot.Write}
	code := cli.Sharqctl(context.Background(), append([]string{"sharqctl"}, args...), sys)
	return out.String(), errb.String(), code
}

func TestReports(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares+"\n[accounting]\nsample_interval = \"1s\"\n")
	n := tc.attachNode("n1")
	var aliceJobs, bobJobs []string
	for i := range 3 {
		aliceJobs = append(aliceJobs, tc.runJob(n, alice, "a", 2, i))
		bobJobs = append(bobJobs, tc.runJob(n, bob, "b", 6, 0)) // borrows 2 of a's GPUs
	}
	for _, id := range append(append([]string(nil), aliceJobs...), bobJobs...) {
		tc.waitRecorded(id)
	}
	// Samples are taken each second.
	s := tc.store()
	deadline := time.Now().Add(10 * time.Second)
	for {
		xs, err := s.Samples(context.Background(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour), 100)
		if err == nil && len(xs) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no share samples: %v %v", xs, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// What the store says each user used, to compare the reports with.
	want := map[string]float64{}
	recs, err := s.Jobs(context.Background(), acct.JobFilter{})
	if err != nil || len(recs) != 6 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	for _, r := range recs {
		want[r.User] += (r.OwnedGPUSeconds + r.BorrowedGPUSeconds) / 3600
	}
	ctx := context.Background()
	usage := func(who Identity, spec api.ReportSpec) *api.Response {
		spec.Kind = api.ReportUsage
		return tc.ctl.report(ctx, who, &spec)
	}

	t.Run("admin sees every user", func(t *testing.T) {
		resp := tc.call(api.Request{Op: api.OpReport, Report: &api.ReportSpec{Kind: api.ReportUsage, By: "user"}})
		if resp.Error != nil || len(resp.Usage) != 2 {
			t.Fatalf("usage by user: %+v %v", resp.Usage, resp.Error)
		}
		for _, r := range resp.Usage {
			if !nearly(r.Owned+r.Borrowed, want[r.Key]) || r.Jobs != 3 {
				t.Errorf("%s: %+v, want %v GPU-h over 3 jobs", r.Key, r, want[r.Key])
			}
		}
	})
	t.Run("user sees own", func(t *testing.T) {
		resp := usage(bob, api.ReportSpec{By: "user"})
		if resp.Error != nil || len(resp.Usage) != 1 || resp.Usage[0].Key != "bob" {
			t.Fatalf("bob's usage: %+v %v", resp.Usage, resp.Error)
		}
		if resp := usage(bob, api.ReportSpec{By: "user", User: "alice"}); resp.Error == nil || resp.Error.Code != api.CodePermission {
			t.Fatalf("bob asking for alice's usage: %+v", resp)
		}
		jobs := tc.ctl.report(ctx, bob, &api.ReportSpec{Kind: api.ReportJobs})
		if jobs.Error != nil || len(jobs.Jobs) != 3 {
			t.Fatalf("bob's jobs: %d %v", len(jobs.Jobs), jobs.Error)
		}
		for _, j := range jobs.Jobs {
			if j.Owner.User != "bob" {
				t.Fatalf("bob sees %s's job %s", j.Owner.User, j.ID)
			}
		}
	})
	t.Run("by share has lending", func(t *testing.T) {
		resp := usage(alice, api.ReportSpec{By: "share"})
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		var b api.UsageRow
		for _, r := range resp.Usage {
			if r.Key == "b" {
				b = r
			}
		}
		if b.Jobs != 0 || b.Quota <= 0 {
			t.Fatalf("alice's view of share b: %+v (no jobs of hers, the share's quota sampled)", b)
		}
		adm := tc.call(api.Request{Op: api.OpReport, Report: &api.ReportSpec{Kind: api.ReportUsage, By: "share", Share: "b"}})
		if adm.Error != nil || len(adm.Usage) != 1 || adm.Usage[0].Borrowed <= 0 || adm.Usage[0].Jobs != 3 {
			t.Fatalf("share b: %+v %v", adm.Usage, adm.Error)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		for _, spec := range []api.ReportSpec{
			{Kind: "nope"}, {Kind: api.ReportUsage, By: "team"}, {Kind: api.ReportJobs, State: "weird"},
			{Kind: api.ReportJobs, Limit: -1}, {Kind: api.ReportUsage, Start: time.Now(), End: time.Now().Add(-time.Hour)},
			{Kind: api.ReportUsage, Start: time.Unix(0, 0), End: time.Now().Add(100 * 366 * 24 * time.Hour)},
			{Kind: api.ReportUsage, User: strings.Repeat("x", 5000)},
		} {
			if resp := tc.ctl.report(ctx, alice, &spec); resp.Error == nil || resp.Error.Code == api.CodeInternal {
				t.Errorf("report %+v: %+v, want a bad request", spec, resp.Error)
			}
		}
		if resp := tc.call(api.Request{Op: api.OpReport}); resp.Error == nil {
			t.Error("report without a spec answered")
		}
	})
	t.Run("sharqctl", func(t *testing.T) {
		out, errOut, code := tc.sharqctl("report", "usage", "--by", "user", "--format", "csv", "--start", "1h")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 3 || rows[0][0] != "user" {
			t.Fatalf("csv: %q %v", out, err)
		}
		for _, row := range rows[1:] {
			owned, _ := strconv.ParseFloat(row[2], 64)
			borrowed, _ := strconv.ParseFloat(row[3], 64)
			if diff := owned + borrowed - want[row[0]]; diff > 0.01 || diff < -0.01 {
				t.Errorf("csv row %v: %v GPU-h, want %v", row, owned+borrowed, want[row[0]])
			}
		}
		plot := filepath.Join(tc.dir, "usage.svg")
		if out, errOut, code = tc.sharqctl("report", "usage", "--start", "1h", "--plot", plot); code != 0 || !strings.Contains(out, "Share") {
			t.Fatalf("table and plot: exit %d: %s %s", code, out, errOut)
		}
		if b, err := os.ReadFile(plot); err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("borrowed")) {
			t.Fatalf("plot: %v, %d bytes", err, len(b))
		}
		out, errOut, code = tc.sharqctl("report", "jobs", "--format", "json", "--state", "failed")
		var jobs []api.Job
		if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs) != 2 {
			t.Fatalf("failed jobs: exit %d %s %s", code, out, errOut)
		}
		if _, _, code = tc.sharqctl("report", "usage", "--by", "team"); code != cli.ExitUsage {
			t.Fatalf("--by team: exit %d", code)
		}
	})

	// The jobs leave the spool (a new spool directory, the same history):
	// qstat -x ID finds them in the history, for their owner and admins.
	conf, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(tc.dir, "spool", "history.db")
	text := strings.Replace(string(conf), filepath.Join(tc.dir, "spool"), filepath.Join(tc.dir, "spool2"), 1)
	text += fmt.Sprintf("path = %q\n", hist)
	if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tc.restart()
	id := aliceJobs[1]
	stat := &api.StatFilter{IDs: []string{strings.TrimSuffix(id, ".t")}, Finished: true, Full: true}
	resp := tc.call(api.Request{Op: api.OpStat, Stat: stat})
	if resp.Error != nil || len(resp.Jobs) != 1 {
		t.Fatalf("qstat -xf %s from the history: %+v", id, resp.Error)
	}
	if j := resp.Jobs[0]; j.ID != id || j.Owner.User != "alice" || j.ExitStatus == nil || *j.ExitStatus != 1 || j.State != api.StateFinished {
		t.Fatalf("job from the history: %+v", j)
	}
	if r := tc.ctl.statHistory(ctx, alice, stat); r.Error != nil || len(r.Jobs) != 1 {
		t.Fatalf("alice's qstat -x of her job: %+v", r.Error)
	}
	if r := tc.ctl.statHistory(ctx, bob, stat); r.Error == nil || r.Error.Code != api.CodeUnknownJob {
		t.Fatalf("bob's qstat -x of alice's job: %+v", r)
	}
	sum, err := client.Call(ctx, tc.sock, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Finished: true, Summary: true}})
	if err != nil || !bytes.Contains(sum.Summary, []byte(id)) {
		t.Fatalf("qstat -x summary from the history: %q %v", sum.Summary, err)
	}
	if r := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"999"}, Finished: true}}); r.Error == nil || r.Error.Code != api.CodeUnknownJob {
		t.Fatalf("unknown job: %+v", r.Error)
	}
	// The site switch: users see everything.
	if err := os.WriteFile(tc.conf, []byte(text+"users_see_all = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tc.ctl.Reload(ctx, tc.conf); err != nil {
		t.Fatal(err)
	}
	if r := tc.ctl.statHistory(ctx, bob, stat); r.Error != nil || len(r.Jobs) != 1 {
		t.Fatalf("bob's qstat -x of alice's job with users_see_all: %+v", r.Error)
	}
	if resp := usage(bob, api.ReportSpec{By: "user"}); resp.Error != nil || len(resp.Usage) != 2 {
		t.Fatalf("bob's usage with users_see_all: %+v %v", resp.Usage, resp.Error)
	}
}
