//go:build !unit

package noded

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime"
)

// The spec of a job carries the client mounts and variables.
func TestPrepareSpecClients(t *testing.T) {
	dir := t.TempDir()
	o := &api.StartOrder{Image: "img", Job: api.RunSpec{ID: "5.lab", Name: "j", WorkDir: "/w", Stdout: "/w/o", Stderr: "/w/e",
		Owner: api.Owner{User: "u", UID: 1000, GID: 1000}, Command: []string{"qsub", "--", "true"}}}
	spec, err := prepareSpec(o, specInput{Node: "n1", JobDir: filepath.Join(dir, "jobs", "5.lab"), CheckpointRoot: filepath.Join(dir, "ckpt"),
		Clients: jobClients{Binaries: []string{"/usr/local/bin/qsub"}, Servers: []string{"ctl:6818"}}})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, m := range spec.Mounts {
		found = found || m == runtime.Mount{Source: "/usr/local/bin/qsub", Dest: "/run/sharq/bin/qsub", ReadOnly: true}
	}
	if !found {
		t.Errorf("mounts %+v lack qsub", spec.Mounts)
	}
	env := strings.Join(spec.Env, "\n")
	if !strings.Contains(env, "SHARQ_SERVER=ctl:6818") || !strings.Contains(env, ":/run/sharq/bin\n") {
		t.Errorf("env:\n%s", env)
	}
}
