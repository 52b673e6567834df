//go:build !unit

package ctld

import (
	"os"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func TestSubmitQueueResolution(t *testing.T) {
	host, _ := os.Hostname()
	short, _, _ := strings.Cut(host, ".")
	withDefault := newTestClusterWith(t, []string{"n1:8"}, twoShares, `default_share = "b"`)
	without := newTestCluster(t, []string{"n1:8"}, twoShares)
	tests := []struct {
		name      string
		tc        *testCluster
		queue     string
		wantShare string
		wantErr   string
	}{
		{"named", without, "a", "a", ""},
		{"default share", withDefault, "", "b", ""},
		{"named wins over the default", withDefault, "a", "a", ""},
		{"at the cluster's name", without, "a@t", "a", ""},
		{"at the controller's host", without, "a@" + short, "a", ""},
		{"default at the server", withDefault, "@t", "b", ""},
		{"other server", without, "a@elsewhere", "", `queue "a@elsewhere" is on server "elsewhere", not on this cluster (t)`},
		{"no default", without, "", "", "no queue given and the cluster has no default_share: use -q SHARE, one of a, b"},
		{"unknown", without, "zz", "", `unknown queue "zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, e := tt.tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: tt.queue, Command: []string{"true"}, WorkDir: "/tmp"}})
			if tt.wantErr != "" {
				if e == nil || !strings.Contains(e.Message, tt.wantErr) {
					t.Fatalf("error %v, want %q", e, tt.wantErr)
				}
				return
			}
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			if got := tt.tc.job(id); got.Share != tt.wantShare || got.Env["PBS_O_QUEUE"] != tt.wantShare {
				t.Errorf("share %q (PBS_O_QUEUE %q), want %q", got.Share, got.Env["PBS_O_QUEUE"], tt.wantShare)
			}
		})
	}
}
