package ctld

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// TestJobBytesCountsEveryField: every string, list and map of api.Job (one
// added later too) counts in jobBytes, but for the few named here that
// the controller sets to a bounded size itself.
func TestJobBytesCountsEveryField(t *testing.T) {
	notCharged := map[string]string{
		"ID":          "the controller's: 123.cluster",
		"State":       "the controller's: one of a few words",
		"ArrayParent": "subjobs are not charged; their array is",
		"History":     "at most 200 entries of the controller's own words (job.history)",
		"Allocs":      "the controller's, while it runs: one per node",
		"Domains":     "the controller's, in a qstat -f answer only: never stored",
	}
	r := rand.New(rand.NewPCG(1, 2))
	var walk func(path string, typ reflect.Type, set func(j *api.Job) reflect.Value)
	walk = func(path string, typ reflect.Type, field func(j *api.Job) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := path + f.Name
			get := func(j *api.Job) reflect.Value { return field(j).Field(i) }
			switch f.Type.Kind() {
			case reflect.Struct:
				if f.Type.PkgPath() == "time" {
					continue
				}
				walk(name+".", f.Type, get)
			case reflect.String, reflect.Slice, reflect.Map:
				t.Run(name, func(t *testing.T) {
					var j api.Job
					fillJob(get(&j), r, []string{"a"}, 1000, 3)
					got := jobBytes(&j) - jobOverhead
					if why, ok := notCharged[f.Name]; ok {
						if got != 0 {
							t.Errorf("counted %d bytes of a field left out (%s)", got, why)
						}
						return
					}
					if got <= 0 {
						t.Errorf("%s filled counts %d bytes: count it in jobBytes", name, got)
					}
				})
			}
		}
	}
	walk("", reflect.TypeFor[api.Job](), func(j *api.Job) reflect.Value { return reflect.ValueOf(j).Elem() })
}

// TestUserBytesChargePathsAndDeps (N4): long paths and names count
// against the per-user cap, and so do dependencies added by qalter: a user
// holding jobs whose scripts are empty is refused (CodeUserLimit) long
// before the controller holds thousands of them.
func TestUserBytesChargePathsAndDeps(t *testing.T) {
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "", Limits{UserBytes: 1 << 20})
	long := "/tmp/" + strings.Repeat("d/", 2000)
	spec := func() api.Request {
		return api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a", Name: strings.Repeat("n", 200),
			Command: []string{"true"}, WorkDir: long, Stdout: long + "o", Stderr: long + "e", Hold: "u"}}}
	}
	var ids []string
	for {
		resp := callAs(tc.ctl, mallory, spec())
		if resp.Error != nil {
			if resp.Error.Code != api.CodeUserLimit || !strings.Contains(resp.Error.Message, "would pass max_job_bytes_per_user") {
				t.Fatalf("submit %d: %+v", len(ids), resp.Error)
			}
			break
		}
		ids = append(ids, resp.JobID)
		if len(ids) > 100 {
			t.Fatalf("%d held jobs of 12 KB paths each taken under a 1 MiB cap", len(ids))
		}
	}
	if resp := callAs(tc.ctl, alice, spec()); resp.Error != nil {
		t.Fatalf("another user: %v", resp.Error)
	}
	// Small jobs fill what room is left; then qalter to 1,024
	// dependencies passes the cap.
	for {
		resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a",
			Command: []string{"true"}, WorkDir: "/tmp", Hold: "u"}}})
		if resp.Error != nil {
			break
		}
		ids = append(ids, resp.JobID)
	}
	deps := make([]api.Dep, 1024)
	for i := range deps {
		deps[i] = api.Dep{Type: jobid.AfterOK, On: ids[3]}
	}
	resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: ids[2], Deps: &deps}})
	if resp.Error == nil || resp.Error.Code != api.CodeUserLimit {
		t.Fatalf("qalter to 1,024 dependencies: %+v", resp.Error)
	}
	if j := tc.job(ids[2]); len(j.Deps) != 0 {
		t.Fatalf("refused qalter changed the dependencies: %d", len(j.Deps))
	}
}

// TestMaxQueuedJobsPerUser (N4): the cluster's max_queued_jobs_per_user
// caps a user's unfinished jobs in each share, an array counting its
// subjobs, a share's own value overriding it; the refusal is typed, other
// users are not affected, a finished job makes room, and a restart counts
// the same.
func TestMaxQueuedJobsPerUser(t *testing.T) {
	shares := strings.Replace(twoShares, `name = "b"`, "name = \"b\"\nmax_queued_jobs_per_user = 5", 1)
	tc := newTestClusterWith(t, []string{"n1:8"}, shares, "max_queued_jobs_per_user = 3")
	submit := func(who Identity, share, array string) *api.Response {
		spec := api.JobSpec{Share: share, Command: []string{"true"}, WorkDir: "/tmp", Hold: "u"}
		if array != "" {
			spec.ArrayIndices = indices(array)
		}
		return callAs(tc.ctl, who, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: spec}})
	}
	var ids []string
	for range 2 {
		resp := submit(mallory, "a", "")
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		ids = append(ids, resp.JobID)
	}
	if resp := submit(mallory, "a", "0-1"); resp.Error == nil || resp.Error.Code != api.CodeUserLimit ||
		!strings.Contains(resp.Error.Message, "max_queued_jobs_per_user of 3") {
		t.Fatalf("an array of 2 over the limit: %+v", resp.Error)
	}
	if resp := submit(mallory, "a", ""); resp.Error != nil {
		t.Fatalf("third job: %v", resp.Error)
	}
	if resp := submit(mallory, "a", ""); resp.Error == nil || resp.Error.Code != api.CodeUserLimit {
		t.Fatalf("fourth job: %+v", resp.Error)
	}
	if resp := submit(alice, "a", ""); resp.Error != nil {
		t.Fatalf("another user: %v", resp.Error)
	}
	if resp := submit(mallory, "b", "0-4"); resp.Error != nil {
		t.Fatalf("share b's own limit of 5: %v", resp.Error)
	}
	if resp := submit(mallory, "b", ""); resp.Error == nil || resp.Error.Code != api.CodeUserLimit {
		t.Fatalf("sixth job in share b: %+v", resp.Error)
	}
	if resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpDelete, IDs: ids[:1]}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if resp := submit(mallory, "a", ""); resp.Error != nil {
		t.Fatalf("after a qdel: %v", resp.Error)
	}
	tc.restart()
	if resp := submit(mallory, "a", ""); resp.Error == nil || resp.Error.Code != api.CodeUserLimit {
		t.Fatalf("after a restart: %+v", resp.Error)
	}
}

// BenchmarkHeldJobMemory measures what one held job costs the controller
// (heap bytes after a GC, with the controller running and once its spool's
// in-memory log is let go; spool bytes) beside what jobBytes charges its
// user, each per job: one of the largest size the checks allow (a
// 236-byte name, three 4 KiB paths, 1,024 dependencies; no script or
// environment, which were always charged) and a small one as qsub -V
// sends it (go test -run '^$' -bench HeldJobMemory -benchtime 1x).
func BenchmarkHeldJobMemory(b *testing.B) {
	long := "/" + strings.Repeat("p/", 2046)
	env := map[string]string{}
	for i := range 40 {
		env[fmt.Sprintf("VARIABLE_%d", i)] = strings.Repeat("v", 60)
	}
	for _, bc := range []struct {
		name string
		spec func(dep string) api.JobSpec
	}{
		{"largest", func(dep string) api.JobSpec {
			deps := make([]api.Dep, 1024)
			for i := range deps {
				deps[i] = api.Dep{Type: jobid.AfterOK, On: dep}
			}
			return api.JobSpec{Share: "a", Name: strings.Repeat("n", 236), Command: []string{"true"},
				WorkDir: long, Stdout: long + "o", Stderr: long + "e", Deps: deps, Hold: "u"}
		}},
		{"small", func(string) api.JobSpec {
			return api.JobSpec{Share: "a", Name: "train", Script: "#!/bin/sh\npython train.py --lr 0.1\n", Env: env,
				WorkDir: "/home/mallory/project", Hold: "u"}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) { heldJobMemory(b, bc.spec) })
	}
}

func heldJobMemory(b *testing.B, spec func(dep string) api.JobSpec) {
	const jobs = 500
	tc := newTestClusterLimits(b, []string{"n1:8"}, twoShares, "", Limits{UserBytes: 1 << 40})
	first := callAs(tc.ctl, mallory, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a",
		Command: []string{"true"}, WorkDir: "/tmp", Hold: "u"}}})
	if first.Error != nil {
		b.Fatal(first.Error)
	}
	spoolSize := func() int64 {
		var n int64
		filepath.WalkDir(filepath.Join(tc.dir, "spool"), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		return n
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for b.Loop() {
		h0, s0 := heap(), spoolSize()
		var charged int64
		tc.ctl.do(context.Background(), func() { charged = tc.ctl.userBytes[mallory.UID] })
		for range jobs {
			j := spec(first.JobID)
			resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: j}})
			if resp.Error != nil {
				b.Fatal(resp.Error)
			}
		}
		tc.ctl.do(context.Background(), func() { charged = tc.ctl.userBytes[mallory.UID] - charged })
		live := heap()
		tc.stop() // the spool written, and closed: its in-memory log (at most 8 MiB in all) let go
		b.ReportMetric(float64(live-h0)/jobs, "live-heap-B/job")
		b.ReportMetric(float64(heap()-h0)/jobs, "heap-B/job")
		b.ReportMetric(float64(spoolSize()-s0)/jobs, "spool-B/job")
		b.ReportMetric(float64(charged)/jobs, "charged-B/job")
		tc.start()
	}
}
