package ctld

import (
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestOtherUsersSecretsHidden: qstat -f, qstat's brief JSON, qstat -x
// (and qsub -W block's answer) of another user's job show no environment,
// script, command or interpreter; the owner and admins see them in qstat -f.
// (The brief answer once showed the interpreter, qsub -S, to everyone.)
func TestOtherUsersSecretsHidden(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Script: "#!/bin/sh\necho $TOKEN\n", Shell: "/bin/sh",
		WorkDir: "/tmp", Env: map[string]string{"TOKEN": "s3cret"}, Resources: api.Resources{GPUsPerNode: 1}, Hold: "u"}})
	root := Identity{UID: 0, User: "root"}
	forms := []struct {
		name string
		stat api.StatFilter
		full bool // the owner sees everything in it
	}{
		{"qstat -f", api.StatFilter{IDs: []string{id}, Full: true}, true},
		{"qstat -x -f", api.StatFilter{IDs: []string{id}, Full: true, Finished: true}, true},
		{"brief, by id", api.StatFilter{IDs: []string{id}}, false},
		{"brief, listing", api.StatFilter{}, false},
		{"qstat -x listing", api.StatFilter{Finished: true, Full: true}, true},
	}
	tests := []struct {
		name string
		who  Identity
		sees bool
	}{
		{"owner", alice, true},
		{"admin", root, true},
		{"another user", mallory, false},
	}
	for _, f := range forms {
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				stat := f.stat
				resp := callAs(tc.ctl, tt.who, api.Request{Op: api.OpStat, Stat: &stat})
				if resp.Error != nil || len(resp.Jobs) != 1 {
					t.Fatalf("stat: %+v %d jobs", resp.Error, len(resp.Jobs))
				}
				j := resp.Jobs[0]
				if !tt.sees {
					if j.Env != nil || j.Script != "" || j.Command != nil || j.Shell != "" {
						t.Fatalf("another user sees secrets: env %v script %q command %q shell %q", j.Env, j.Script, j.Command, j.Shell)
					}
				} else if got := j.Env["TOKEN"] == "s3cret" && j.Script != "" && j.Shell != ""; f.full && !got {
					t.Fatalf("the owner or an admin does not see the job's environment, script and shell: %+v", j)
				}
				if j.Name != "j" || j.Owner.User != "alice" || j.State == "" {
					t.Fatalf("the summary fields are missing: %+v", j)
				}
			})
		}
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
