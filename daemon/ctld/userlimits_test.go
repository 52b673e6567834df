//go:build !unit

package ctld

import (
	"os"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestUserLimitsShownAsReasons: jobs held by a share's per-user limits say
// so in qstat (the core's typed reason, as is), and a reload raising the
// limit lets them start.
func TestUserLimitsShownAsReasons(t *testing.T) {
	shares := `
[[share]]
name = "a"
partition = "gpu"
gpus = 8
strategy = "LEND"
users = ["*"]
max_running_jobs_per_user = 1
max_gpus_per_user = 3
`
	tc := newTestCluster(t, []string{"n1:8"}, shares)
	n := tc.attachNode("n1")
	first := tc.submit("a", 2, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != first {
		t.Fatalf("start %+v", st)
	}
	second := tc.submit("a", 1, nil)
	if j := tc.job(second); j.State != api.StateQueued || j.Reason != "UserJobLimit" {
		t.Fatalf("second job of the user: %s %q, want Q UserJobLimit", j.State, j.Reason)
	}
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	raised := strings.Replace(string(text), "max_running_jobs_per_user = 1", "max_running_jobs_per_user = 5", 1)
	if err := os.WriteFile(tc.conf, []byte(raised), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
		t.Fatalf("reload: %v", resp.Error)
	}
	if st := n.expect(api.MsgStart).Start; st.Job.ID != second {
		t.Fatalf("start after the reload: %+v", st)
	}
	third := tc.submit("a", 2, nil) // 2 + 1 + 2 GPUs > 3
	if j := tc.job(third); j.State != api.StateQueued || j.Reason != "UserGPULimit" {
		t.Fatalf("job past the GPU limit: %s %q, want Q UserGPULimit", j.State, j.Reason)
	}
}
