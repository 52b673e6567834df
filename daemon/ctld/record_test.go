package ctld

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool"
)

// The fixture testdata/spool-v1 was written by the controller at commit
// 2cb5bca (record version 1, the bare api.Job): jobs.db is its spool,
// jobs.json its records as that code decoded them (a Scan after it stopped).
// make_fixture_test.go.txt is the test that made both, run in a worktree of
// that commit with FIXTURE_OUT set.
const v1Fixture = "testdata/spool-v1"

// v1Fields are the api.Job fields that version 1 records had.
var v1Fields = []string{"ID", "Seq", "Name", "Owner", "Share", "Partition", "Priority", "Script", "Command",
	"WorkDir", "Env", "Stdout", "Stderr", "Image", "Grace", "Join", "Resources", "Hold", "NotBefore", "Deps",
	"ArrayIndices", "ArrayMax", "ArrayParent", "ArrayIndex", "State", "Stopping", "Reason", "Allocs",
	"Preemptions", "Runs", "ExitStatus", "SubmitTime", "StartTime", "EndTime", "Used", "History"}

// v1Unset are version 1 fields no fixture job has set: a stop in flight
// is not a state the old controller could be stopped in from a test.
var v1Unset = map[string]bool{"Stopping": true, "Preemptions": true}

func readV1Jobs(t *testing.T) []api.Job {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(v1Fixture, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []api.Job
	if err := json.Unmarshal(b, &jobs); err != nil {
		t.Fatal(err)
	}
	return jobs
}

// useSpool replaces the stopped cluster's spool file with the fixture's.
func (tc *testCluster) useSpool(t *testing.T, db string) {
	t.Helper()
	tc.stop()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tc.dir, "spool", "jobs.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// v1FixtureCopy is a private copy of the fixture's spool directory.
func v1FixtureCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(v1Fixture, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jobs.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// record is the controller's copy of a job, read on its loop.
func (tc *testCluster) record(t *testing.T, id string) (api.Job, bool) {
	t.Helper()
	var j api.Job
	var ok bool
	if err := tc.ctl.do(context.Background(), func() {
		var cj *job
		if cj, ok = tc.ctl.jobs[id]; ok {
			j = cj.Job
		}
	}); err != nil {
		t.Fatal(err)
	}
	return j, ok
}

func TestV1FixtureCoversEveryField(t *testing.T) {
	jobs := readV1Jobs(t)
	typ := reflect.TypeFor[api.Job]()
	known := map[string]bool{}
	for _, f := range v1Fields {
		known[f] = true
		if _, ok := typ.FieldByName(f); !ok {
			t.Errorf("api.Job lost version 1 field %s: add the upgrade to decodeRecord", f)
		}
	}
	for _, f := range v1Fields {
		set := false
		for _, j := range jobs {
			if !reflect.ValueOf(j).FieldByName(f).IsZero() {
				set = true
			}
		}
		if set == v1Unset[f] {
			t.Errorf("field %s: set in the fixture %v, listed as unset %v", f, set, v1Unset[f])
		}
	}
	states := map[api.State]int{}
	for _, j := range jobs {
		states[j.State]++
	}
	for _, st := range []api.State{api.StateQueued, api.StateHeld, api.StateRunning, api.StateFinished, api.StateArray} {
		if states[st] == 0 {
			t.Errorf("no %s job in the fixture: %v", st, states)
		}
	}
}

func TestRestoreFromV1Spool(t *testing.T) {
	want := readV1Jobs(t)
	// The records themselves: every field as the old code read it.
	sp, err := spool.Open(v1FixtureCopy(t), spool.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	err = sp.Scan(context.Background(), func(r spool.Record) error {
		j, err := decodeRecord(r.ID, r.Data)
		if err != nil {
			return err
		}
		if i >= len(want) || !reflect.DeepEqual(j, want[i]) {
			t.Errorf("record %d (%s) does not decode as the old code read it: %+v", i, r.ID, j)
		}
		i++
		return nil
	})
	sp.Close()
	if err != nil || i != len(want) {
		t.Fatalf("scan: %v, %d records, want %d", err, i, len(want))
	}

	// A controller restored from them.
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	tc.useSpool(t, filepath.Join(v1Fixture, "jobs.db"))
	tc.start()
	for _, w := range want {
		got, ok := tc.record(t, w.ID)
		if !ok {
			t.Errorf("job %s not restored", w.ID)
			continue
		}
		got.Acct = api.Usage{} // new since version 1; filled in at restore
		if w.State != api.StateRunning && w.State != api.StateFinished {
			// The core works out a pending job's state and reason again
			// (below, once the node is back).
			got.State, got.Reason = w.State, w.Reason
		}
		if !reflect.DeepEqual(got, w) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(w)
			t.Errorf("job %s changed in the upgrade:\n got %s\nwant %s", w.ID, gb, wb)
		}
	}
	// The restored jobs go on: the node reports what it runs, the running
	// job ends, its dependant (held, afterok) is released by the user's
	// hold being lifted and may start.
	n := tc.attachNode("n1", api.RunningJob{JobID: "2.t", Run: 0}, api.RunningJob{JobID: "3[1].t", Run: 0},
		api.RunningJob{JobID: "3[2].t", Run: 0})
	n.report("2.t", 0, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitState("2.t", api.StateFinished)
	for _, w := range want {
		if w.State == api.StateRunning || w.State == api.StateFinished || w.ID == "4.t" || !w.ArrayIndices.IsZero() {
			// 4.t: afterok on 2.t, now satisfied, but still user-held.
			// The array parent: after any restart it reads Q until a
			// subjob starts (plan.go sets B only on a start).
			continue
		}
		if got := tc.waitState(w.ID, w.State); got.Reason != w.Reason {
			t.Errorf("job %s: reason %q, want %q", w.ID, got.Reason, w.Reason)
		}
	}
	if j := tc.job("4.t"); j.State != api.StateHeld || j.Hold != "u" {
		t.Errorf("4.t: state %s hold %q, want H u", j.State, j.Hold)
	}
	// Written again in the current version, and read back after a restart.
	rec, err := tc.ctl.sp.Get(context.Background(), "2.t")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(rec.Data), `{"v":2,`) {
		t.Errorf("rewritten record is not version 2: %.40s", rec.Data)
	}
	tc.restart()
	got, ok := tc.record(t, "2.t")
	if !ok || got.State != api.StateFinished || got.ExitStatus == nil || *got.ExitStatus != 0 || got.Name != "train" {
		t.Errorf("2.t after a restart: %+v", got)
	}
	got, _ = tc.record(t, "1.t")
	if got.Acct = (api.Usage{}); !reflect.DeepEqual(got, want[0]) {
		t.Errorf("1.t after a restart: %+v", got)
	}
}

func TestFutureRecordVersionRefused(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	tc.stop()
	sp, err := spool.Open(filepath.Join(tc.dir, "spool"), spool.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Put(context.Background(), spool.Record{ID: "5.t", Data: []byte(`{"v":3,"job":{"id":"5.t","state":"Q"},"new":1}`)}); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	_, err = New(context.Background(), Options{ConfigPath: tc.conf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if !errors.Is(err, ErrRecordVersion) || !strings.Contains(err.Error(), "5.t") || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("New with a version 3 record: %v", err)
	}
}

func TestDecodeRecord(t *testing.T) {
	cases := []struct {
		name, data string
		want       error // nil: decodes to job 7.t
	}{
		{"version 1", `{"id":"7.t","name":"x","state":"Q"}`, nil},
		{"version 2", `{"v":2,"job":{"id":"7.t","name":"x","state":"Q"}}`, nil},
		{"version 3", `{"v":3,"job":{"id":"7.t"}}`, ErrRecordVersion},
		{"huge version", `{"v":99999999999,"job":{"id":"7.t"}}`, ErrRecordVersion},
		{"version 0", `{"v":0,"job":{"id":"7.t"}}`, spool.ErrCorrupt},
		{"negative version", `{"v":-2,"job":{"id":"7.t"}}`, spool.ErrCorrupt},
		{"version as a string", `{"v":"2","job":{"id":"7.t"}}`, spool.ErrCorrupt},
		{"version 2 without a job", `{"v":2}`, spool.ErrCorrupt},
		{"other id", `{"v":2,"job":{"id":"8.t"}}`, spool.ErrCorrupt},
		{"not json", `{"id":`, spool.ErrCorrupt},
		{"empty", ``, spool.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := decodeRecord("7.t", []byte(c.data))
			if c.want == nil {
				if err != nil || j.ID != "7.t" || j.Name != "x" || j.State != api.StateQueued {
					t.Fatalf("got %+v, %v", j, err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "7.t") {
				t.Fatalf("got %v, want %v naming the job", err, c.want)
			}
		})
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, j := range []string{`{"id":"7.t","state":"Q"}`, `{"v":2,"job":{"id":"7.t","env":{"A":"b"}}}`, `{"v":3}`, `{"v":2,"job":null}`} {
		f.Add([]byte(j))
	}
	if b, err := os.ReadFile(filepath.Join(v1Fixture, "jobs.json")); err == nil {
		var raw []json.RawMessage
		if json.Unmarshal(b, &raw) == nil && len(raw) > 0 {
			f.Add([]byte(raw[0]))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := decodeRecord("7.t", data)
		if err != nil {
			return
		}
		b, err := encodeRecord(&j)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		k, err := decodeRecord("7.t", b)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		// An empty list or map is not written (omitempty) and reads back
		// as nil: the same job.
		nilEmpty(reflect.ValueOf(&j).Elem())
		if !reflect.DeepEqual(j, k) {
			t.Fatalf("round trip changed the job:\n%+v\n%+v", j, k)
		}
	})
}

// nilEmpty sets every empty slice and map reachable from v to nil.
func nilEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			nilEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				nilEmpty(f)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
		}
		for i := range v.Len() {
			nilEmpty(v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.SetZero()
		}
	}
}
