package ctld

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool"
)

// TestHistoryBoundsAreTheRecords: the history takes whatever the spool's
// job record holds (its bounds are at least the record's), so a job that
// fitted the spool loses nothing of its detail.
func TestHistoryBoundsAreTheRecords(t *testing.T) {
	var j job
	for i := range 3 * acct.MaxEvents {
		j.history(time.Unix(int64(i), 0), "x")
	}
	switch {
	case acct.MaxDetailLen < spool.MaxRecordSize:
		t.Errorf("acct.MaxDetailLen %d < spool.MaxRecordSize %d", acct.MaxDetailLen, spool.MaxRecordSize)
	case acct.MaxEnvVars < maxEnvVars || acct.MaxArgs < maxArgs || acct.MaxDeps < maxDeps:
		t.Errorf("the history's counts are below submit's")
	case len(j.History) > acct.MaxEvents:
		t.Errorf("a job keeps %d events, the history %d", len(j.History), acct.MaxEvents)
	}
}

// TestHistoryRecordFits: historyRecord writes a record the store takes
// whatever the job (one from an older release beyond today's bounds): the
// accounting is always kept; the detail whole while it fits, else its
// largest parts go.
func TestHistoryRecordFits(t *testing.T) {
	many := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m["V"+strconv.Itoa(i)] = "v"
		}
		return m
	}
	events := func(n int) []api.HistoryEntry {
		h := make([]api.HistoryEntry, n)
		for i := range h {
			h[i] = api.HistoryEntry{Time: time.Unix(int64(i), 0).UTC(), State: api.StateRunning, What: "e" + strconv.Itoa(i)}
		}
		return h
	}
	tests := []struct {
		name  string
		mod   func(*api.Job)
		whole bool // the detail is kept as it is
		check func(*acct.Detail) bool
	}{
		{"at the spool's bound", func(j *api.Job) { j.Script = strings.Repeat("x", maxSubmitRecord) }, true, nil},
		{"201 events", func(j *api.Job) { j.History = events(201) }, true, nil},
		{"a script beyond the bound", func(j *api.Job) { j.Script = strings.Repeat("x", acct.MaxDetailLen+1) }, false,
			func(d *acct.Detail) bool { return d.Script == "" && d.Env["K"] == "v" && len(d.Events) == 1 }},
		{"script and environment beyond the bound", func(j *api.Job) {
			j.Script = strings.Repeat("x", acct.MaxDetailLen/2+1)
			j.Env["BIG"] = strings.Repeat("y", acct.MaxDetailLen/2)
		}, false, func(d *acct.Detail) bool { return d.Script == "" && d.Env["BIG"] != "" }},
		{"an environment beyond the bound", func(j *api.Job) { j.Env["BIG"] = strings.Repeat("y", acct.MaxDetailLen+1) }, false,
			func(d *acct.Detail) bool { return d.Script == "" && d.Env == nil && d.WorkDir == "/tmp" }},
		{"too many variables", func(j *api.Job) { j.Env = many(acct.MaxEnvVars + 1) }, false,
			func(d *acct.Detail) bool { return d.Env == nil && d.Script != "" }},
		{"too many events", func(j *api.Job) { j.History = events(acct.MaxEvents + 50) }, false,
			func(d *acct.Detail) bool {
				return len(d.Events) == acct.MaxEvents && d.Events[0].What == "e0" &&
					d.Events[len(d.Events)-1].What == "e"+strconv.Itoa(acct.MaxEvents+49)
			}},
		{"a script that is not text", func(j *api.Job) { j.Script = "echo \x00\xff" }, false,
			func(d *acct.Detail) bool { return d.Script == "echo \uFFFD" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := api.Job{ID: "1.lab", Owner: api.Owner{User: "alice", UID: 1000}, Script: "#!/bin/sh\n", WorkDir: "/tmp",
				Env: map[string]string{"K": "v"}, History: events(1), EndTime: time.Unix(100, 0).UTC(), Runs: 1}
			tt.mod(&j)
			r := historyRecord(&j)
			if err := r.Validate(); err != nil {
				t.Fatalf("the store refuses the record: %v", err)
			}
			if r.Runs != 1 || r.User != "alice" || !r.End.Equal(j.EndTime) {
				t.Fatalf("accounting lost: %+v", r)
			}
			back := apiJob(r)
			kept := back.Script == j.Script && reflect.DeepEqual(back.Env, j.Env) && reflect.DeepEqual(back.History, j.History)
			if tt.whole != kept {
				t.Errorf("detail kept whole: %v, want %v", kept, tt.whole)
			}
			if tt.check != nil && !tt.check(&r.Detail) {
				t.Errorf("detail after fitting: script %d bytes, %d variables, %d events", len(r.Detail.Script),
					len(r.Detail.Env), len(r.Detail.Events))
			}
		})
	}
}
