//go:build !unit

package ctld

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// TestPurgedJobKeepsDetailAndSecrets: qstat -x -f of a job the spool has
// purged shows it from the history as it showed the live job (script,
// environment, shell, dependencies, paths, event log), and redacts it the
// same way: the environment, script, command and shell only to the owner
// and admins, even where the site lets users see every job's history. The
// brief answers, the listing and reports carry no secrets.
func TestPurgedJobKeepsDetailAndSecrets(t *testing.T) {
	for _, backend := range historyBackends {
		t.Run(backend, func(t *testing.T) {
			extra := accountingTOML(t, backend, "users_see_all = true\n")
			tc := newTestCluster(t, []string{"n1:8"}, twoShares+extra)
			first := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "first", Share: "a", Script: "#!/bin/sh\n",
				WorkDir: "/tmp", Resources: api.Resources{GPUsPerNode: 1}, Hold: "u"}})
			root := Identity{UID: 0, User: "root"}
			spec := api.JobSpec{Name: "j", Share: "a", Script: "#!/bin/sh\necho $TOKEN\n", Shell: "/bin/sh", WorkDir: "/tmp",
				Env: map[string]string{"TOKEN": "s3cret"}, Resources: api.Resources{GPUsPerNode: 1, MPIProcs: 2},
				Deps: []api.Dep{{Type: jobid.AfterAny, On: first}}, Umask: "077", Join: "oe"}
			resp := callAs(tc.ctl, alice, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: spec}})
			if resp.Error != nil {
				t.Fatal(resp.Error)
			}
			id := resp.JobID
			live := callAs(tc.ctl, alice, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true}})
			if live.Error != nil || len(live.Jobs) != 1 {
				t.Fatalf("live stat: %+v", live)
			}
			for _, del := range []string{id, first} {
				if resp := callAs(tc.ctl, root, api.Request{Op: api.OpDelete, IDs: []string{del}}); resp.Error != nil {
					t.Fatal(resp.Error)
				}
			}
			tc.waitState(id, api.StateFinished)
			tc.waitRecorded(id)
			finished := callAs(tc.ctl, alice, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true, Finished: true}}).Jobs[0]
			if err := tc.ctl.do(context.Background(), func() {
				tc.ctl.purge(time.Now().Add(tc.ctl.cfg.Cluster.History + time.Minute))
			}); err != nil {
				t.Fatal(err)
			}
			if err := tc.ctl.do(context.Background(), func() {
				if tc.ctl.jobs[id] != nil {
					t.Error("the job is still in the spool")
				}
			}); err != nil {
				t.Fatal(err)
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
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					resp := callAs(tc.ctl, tt.who, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true, Finished: true}})
					if resp.Error != nil || len(resp.Jobs) != 1 {
						t.Fatalf("qstat -x -f of the purged job: %+v", resp)
					}
					j := resp.Jobs[0]
					if j.Name != "j" || j.Owner.User != "alice" || j.State != api.StateFinished ||
						len(j.Deps) != 1 || j.Deps[0] != spec.Deps[0] || j.WorkDir != "/tmp" || j.Umask != "077" || j.Join != "oe" ||
						j.Stdout == "" || j.Stdout != finished.Stdout || j.Resources.MPIProcs != 2 ||
						len(j.History) == 0 || len(j.History) != len(finished.History) || j.History[0].What != finished.History[0].What {
						t.Errorf("the purged job lost its detail:\n got %+v\nwant %+v", j, finished)
					}
					secrets := j.Env != nil || j.Script != "" || j.Command != nil || j.Shell != ""
					switch {
					case !tt.sees && secrets:
						t.Errorf("another user sees a purged job's secrets: env %v script %q shell %q", j.Env, j.Script, j.Shell)
					case tt.sees && (j.Env["TOKEN"] != "s3cret" || j.Script != spec.Script || j.Shell != "/bin/sh"):
						t.Errorf("the owner or an admin does not see the purged job's environment, script and shell: %+v", j)
					}
				})
			}
			// The brief answer by id, the listing and the report carry no
			// secrets, whoever asks (as for a live job's brief answer).
			for _, who := range []Identity{alice, root, mallory} {
				for _, req := range []api.Request{
					{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Finished: true}},
					{Op: api.OpStat, Stat: &api.StatFilter{Finished: true, Full: true}},
					{Op: api.OpReport, Report: &api.ReportSpec{Kind: api.ReportJobs}},
				} {
					resp := callAs(tc.ctl, who, req)
					if resp.Error != nil {
						t.Fatalf("%s as %s: %v", req.Op, who.User, resp.Error)
					}
					found := false
					for _, j := range resp.Jobs {
						if j.ID != id {
							continue
						}
						found = true
						if j.Env != nil || j.Script != "" || j.Command != nil || (who.UID != 0 && who.UID != alice.UID && j.Shell != "") {
							t.Errorf("%s as %s shows secrets: %+v", req.Op, who.User, j)
						}
					}
					if !found {
						t.Errorf("%s as %s does not show the purged job", req.Op, who.User)
					}
				}
			}
		})
	}
}
