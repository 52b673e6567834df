//go:build !unit

package ctld

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestSubmitRecordSize: submit refuses a job whose record would pass
// maxSubmitRecord, encoded with JSON's escapes, whether or not recordBound
// lets it skip the encode, and keeps the jobs it takes whole.
func TestSubmitRecordSize(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	near := maxSubmitRecord - 4<<10 // room for the rest of the record
	for _, c := range []struct {
		name   string
		script string
		env    map[string]string
		ok     bool
	}{
		{"small: no encode", "#!/bin/sh\ntrue\n", nil, true},
		{"near the limit in plain text: encoded, fits", "#" + strings.Repeat("x", near), nil, true},
		{"a sixth of the limit, each byte escaped: encoded, too big", "#" + strings.Repeat("<", maxSubmitRecord/6+1), nil, false},
		{"past the limit", "#" + strings.Repeat("x", maxSubmitRecord), nil, false},
		{"past it in the environment", "true\n", map[string]string{"A": strings.Repeat("&", 100<<10), "B": strings.Repeat("&", 100<<10)}, false},
		{"bound just below the limit: no encode", "#" + strings.Repeat("<", (maxSubmitRecord-recordFixed-8<<10)/6), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "big", Share: "a", Script: c.script, Env: c.env, WorkDir: "/tmp", Hold: "u"}})
			if !c.ok {
				if e == nil || !strings.Contains(e.Message, "put the work in a file the script runs") {
					t.Fatalf("submit: %v %v, want refused for its size", id, e)
				}
				return
			}
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			got := tc.job(id)
			if got.Script != c.script {
				t.Errorf("kept a script of %d bytes, want %d", len(got.Script), len(c.script))
			}
			if n, ok := recordBound(&got); strings.HasSuffix(c.name, "no encode") && (!ok || n > maxSubmitRecord) {
				t.Errorf("recordBound %d %v: submit encoded it", n, ok)
			}
		})
	}
}
