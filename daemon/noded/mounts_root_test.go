//go:build !unit

package noded

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

// TestPrepareSpecSite: configured mounts, the host image and HOME.
func TestPrepareSpecSite(t *testing.T) {
	present := t.TempDir()
	ro := t.TempDir()
	missing := filepath.Join(present, "no-such-dir")
	homes := map[uint32]string{1000: "/home/u"}
	cases := []struct {
		name      string
		image     string
		mounts    []conf.Mount
		hostImage bool
		env       map[string]string
		uid       uint32
		wantErr   string
		wantHome  string
		wantSite  []runtime.Mount // the first mounts of the spec
	}{
		{name: "mounts first, at their paths", image: "img", uid: 1000, wantHome: "/home/u",
			mounts:   []conf.Mount{{Path: present}, {Path: ro, ReadOnly: true}},
			wantSite: []runtime.Mount{{Source: present, Dest: present}, {Source: ro, Dest: ro, ReadOnly: true}}},
		{name: "missing mount", image: "img", uid: 1000, mounts: []conf.Mount{{Path: present}, {Path: missing}},
			wantErr: "configured mount " + missing + " is missing"},
		{name: "host image allowed", image: runtime.HostImage, hostImage: true, uid: 1000, wantHome: "/home/u"},
		{name: "host image refused", image: runtime.HostImage, uid: 1000, wantErr: `image "host" is not allowed`},
		{name: "home from qsub", image: "img", uid: 2000, env: map[string]string{"PBS_O_HOME": "/nfs/v"}, wantHome: "/nfs/v"},
		{name: "home unknown", image: "img", uid: 2000, wantHome: "/w"},
		{name: "home set by the job", image: "img", uid: 1000, env: map[string]string{"HOME": "/mine"}, wantHome: "/mine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o := &api.StartOrder{Image: c.image, Job: api.RunSpec{
				ID: "7.lab", WorkDir: "/w", Stdout: "/w/o", Stderr: "/w/e", Command: []string{"true"},
				Owner: api.Owner{User: "u", UID: c.uid, GID: c.uid}, Env: c.env,
			}}
			spec, err := prepareSpec(o, specInput{
				Node: "n1", JobDir: filepath.Join(dir, "job"), CheckpointRoot: filepath.Join(dir, "ckpt"),
				Mounts: c.mounts, HostImage: c.hostImage, Home: func(uid uint32) string { return homes[uid] },
			})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrBadOrder) {
					t.Fatalf("err = %v, want ErrBadOrder with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.Image != c.image {
				t.Errorf("image %q", spec.Image)
			}
			if got := envMap(spec.Env)["HOME"]; got != c.wantHome {
				t.Errorf("HOME = %q, want %q", got, c.wantHome)
			}
			if len(spec.Mounts) < len(c.wantSite) || !slices.Equal(spec.Mounts[:len(c.wantSite)], c.wantSite) {
				t.Errorf("mounts %+v, want first %+v", spec.Mounts, c.wantSite)
			}
		})
	}
}
