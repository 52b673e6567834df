package ctld

import (
	"os"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestOtherUsersSecretsHidden: qstat -f (and qsub -W block's answer) of
// another user's job shows no environment, script or command; the owner
// and admins see them.
func TestOtherUsersSecretsHidden(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Script: "#!/bin/sh\necho $TOKEN\n", Shell: "/bin/sh",
		WorkDir: "/tmp", Env: map[string]string{"TOKEN": "s3cret"}, Resources: api.Resources{GPUsPerNode: 9}}})
	root := Identity{UID: 0, User: "root"}
	tests := []struct {
		name string
		who  Identity
		sees bool
	}{
		{"owner", alice, true},
		{"admin", root, true},
		{"another user", mallory, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := callAs(tc.ctl, tt.who, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true}})
			if resp.Error != nil || len(resp.Jobs) != 1 {
				t.Fatalf("stat: %+v", resp.Error)
			}
			j := resp.Jobs[0]
			if got := j.Env["TOKEN"] == "s3cret" && j.Script != "" && j.Shell != ""; got != tt.sees {
				t.Fatalf("sees the secrets: %v, want %v (%+v)", got, tt.sees, j)
			}
			if j.Name != "j" || j.Owner.User != "alice" || j.State == "" {
				t.Fatalf("the summary fields are missing: %+v", j)
			}
		})
	}
	// The answer to a wait on a finished job, too.
	if resp := callAs(tc.ctl, root, api.Request{Op: api.OpDelete, IDs: []string{id}}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpWait, IDs: []string{id}})
	if resp.Error != nil || len(resp.Jobs) != 1 || resp.Jobs[0].Env != nil || resp.Jobs[0].Script != "" {
		t.Fatalf("wait as another user: %+v", resp)
	}
}

// TestNodeReaddedByReconfigureComesBack: a node that a reload removes and
// a later reload adds again comes back up (it once stayed down forever
// while it heartbeated).
func TestNodeReaddedByReconfigureComesBack(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	n1 := tc.attachNode("n1")
	tc.attachNode("n2")
	reload := func(nodes ...string) {
		t.Helper()
		if err := os.WriteFile(tc.conf, []byte(clusterTOML(tc.dir, tc.listen, nodes, twoShares)), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatalf("reconfigure: %v", resp.Error)
		}
	}
	reload("n2:8")
	reload("n1:8", "n2:8")
	select { // asked to say hello again
	case _, ok := <-n1.msgs:
		for ok {
			_, ok = <-n1.msgs
		}
	case <-time.After(testWait):
		t.Fatal("n1's connection stayed open")
	}
	n1 = tc.attachNode("n1")
	for _, st := range tc.call(api.Request{Op: api.OpNodes}).Nodes {
		if st.State != "up" {
			t.Fatalf("node %s is %s after the reloads", st.Name, st.State)
		}
	}
	_ = n1
}
