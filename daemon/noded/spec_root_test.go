//go:build !unit

package noded

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestPrepareSpec(t *testing.T) {
	inv := []api.GPU{
		{Index: 0, Device: "/dev/fake0"}, {Index: 1, Device: "/dev/fake1"},
		{Index: 2, Device: "/dev/fake2"}, {Index: 3, Device: ""},
	}
	base := func() *api.StartOrder {
		return &api.StartOrder{
			Run: 1, Image: "img", Grace: time.Second, NodeList: []string{"n1", "n2"},
			Job: api.RunSpec{
				ID: "5.lab", Name: "j", WorkDir: "/w", Stdout: "/w/o", Stderr: "/w/e",
				Owner:     api.Owner{User: "u", UID: 1000, GID: 1001, Groups: []uint32{1001, 2000}},
				Script:    "echo hi\n",
				Resources: api.RunResources{CPUsPerNode: 4, MemPerNode: 1 << 30},
			},
		}
	}
	cases := []struct {
		name    string
		edit    func(o *api.StartOrder)
		wantErr string // substring; "" = success
		umask   uint32 // 0: api.DefaultUmask
		check   func(t *testing.T, dir string, o *api.StartOrder, args []string, devices []string)
	}{
		{
			name: "script with GPUs",
			edit: func(o *api.StartOrder) { o.GPUs = []int{2, 0} },
			check: func(t *testing.T, dir string, o *api.StartOrder, args, devices []string) {
				script := filepath.Join(dir, "jobs", "5.lab", scriptFile)
				if !slices.Equal(args, []string{"/bin/sh", "/run/sharq/job/script"}) {
					t.Errorf("args %q", args)
				}
				if b, _ := os.ReadFile(script); string(b) != "echo hi\n" {
					t.Errorf("script file holds %q", b)
				}
				// /dev/null stands for an extra device that exists.
				if !slices.Equal(devices, []string{"/dev/fake2", "/dev/fake0", "/dev/null"}) {
					t.Errorf("devices %q", devices)
				}
			},
		},
		{
			name: "command without GPUs gets no extra devices",
			edit: func(o *api.StartOrder) { o.Job.Script, o.Job.Command = "", []string{"sleep", "1"} },
			check: func(t *testing.T, dir string, o *api.StartOrder, args, devices []string) {
				if !slices.Equal(args, []string{"sleep", "1"}) {
					t.Errorf("args %q", args)
				}
				if len(devices) != 0 {
					t.Errorf("devices %q, want none", devices)
				}
				if _, err := os.Stat(filepath.Join(dir, "jobs", "5.lab", scriptFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("script file written for a command job: %v", err)
				}
			},
		},
		{name: "no image", edit: func(o *api.StartOrder) { o.Image = "" }, wantErr: "no image"},
		{name: "relative workdir", edit: func(o *api.StartOrder) { o.Job.WorkDir = "w" }, wantErr: "not absolute"},
		{name: "nothing to run", edit: func(o *api.StartOrder) { o.Job.Script = "" }, wantErr: "neither script nor command"},
		{name: "GPU not in inventory", edit: func(o *api.StartOrder) { o.GPUs = []int{7} }, wantErr: "not in the node's inventory"},
		{name: "GPU twice", edit: func(o *api.StartOrder) { o.GPUs = []int{1, 1} }, wantErr: "assigned twice"},
		{name: "GPU without device", edit: func(o *api.StartOrder) { o.GPUs = []int{3} }, wantErr: "no device node"},
		{name: "job id with slash", edit: func(o *api.StartOrder) { o.Job.ID = "../x" }, wantErr: "cannot name a directory"},
		{name: "job id dot-dot", edit: func(o *api.StartOrder) { o.Job.ID = ".." }, wantErr: "cannot name a directory"},
		{name: "negative run", edit: func(o *api.StartOrder) { o.Run = -1 }, wantErr: "run -1"},
		{name: "mpiprocs out of range", edit: func(o *api.StartOrder) { o.Job.Resources.MPIProcs = maxMPIProcs + 1 }, wantErr: "mpiprocs 4097 out of range"},
		{name: "node file too large", edit: func(o *api.StartOrder) {
			o.Job.Resources.MPIProcs = maxMPIProcs
			o.NodeList = slices.Repeat([]string{strings.Repeat("n", 63)}, 65)
		}, wantErr: "node file of 65 nodes with 4096 ranks each is over"},
		{name: "node name with a newline", edit: func(o *api.StartOrder) { o.NodeList = []string{"n1", "n2\nn3"} }, wantErr: "node name"},
		{name: "qsub -W umask=022", edit: func(o *api.StartOrder) { o.Job.Umask = "022" }, umask: 0o022},
		{name: "bad umask", edit: func(o *api.StartOrder) { o.Job.Umask = "0999" }, wantErr: "umask"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o := base()
			c.edit(o)
			spec, err := prepareSpec(o, specInput{
				Node: "n1", GPUs: inv, ExtraDevices: []string{"/dev/null", "/dev/no-such-device"},
				JobDir: filepath.Join(dir, "jobs", o.Job.ID), CheckpointRoot: filepath.Join(dir, "ckpt"),
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
			if spec.JobID != o.Job.ID || spec.Node != "n1" || spec.Run != o.Run || spec.UID != 1000 || spec.GID != 1001 ||
				!slices.Equal(spec.Groups, []uint32{1001, 2000}) || spec.WorkDir != "/w" || spec.Stdout != "/w/o" ||
				spec.Stderr != "/w/e" || spec.CPUs != 4 || spec.Memory != 1<<30 {
				t.Errorf("spec %+v", spec)
			}
			if spec.Image == "" {
				t.Errorf("no image in spec")
			}
			if want := cmp.Or(c.umask, api.DefaultUmask); spec.Umask == nil || *spec.Umask != want {
				t.Errorf("umask %v, want %#o", spec.Umask, want)
			}
			nodeFile := filepath.Join(dir, "jobs", o.Job.ID, nodeFileName)
			if b, _ := os.ReadFile(nodeFile); string(b) != "n1\nn2\n" {
				t.Errorf("node file holds %q", b)
			}
			ckpt := filepath.Join(dir, "ckpt", o.Job.ID)
			fi, err := os.Stat(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode().Perm() != 0o700 || st.Uid != 1000 || st.Gid != 1001 {
				t.Errorf("checkpoint dir mode %v owner %d:%d, want 0700 1000:1001", fi.Mode().Perm(), st.Uid, st.Gid)
			}
			env := envMap(spec.Env)
			if env["PBS_NODEFILE"] != "/run/sharq/job/nodefile" || env["SHARQ_CHECKPOINT_DIR"] != ckpt {
				t.Errorf("PBS_NODEFILE %q SHARQ_CHECKPOINT_DIR %q", env["PBS_NODEFILE"], env["SHARQ_CHECKPOINT_DIR"])
			}
			// The job's own files are seen in /run/sharq/job (sharqd's state
			// directory is not theirs to pass through); the rest at their
			// host paths.
			for _, m := range spec.Mounts {
				if filepath.Dir(m.Source) == filepath.Dir(nodeFile) {
					if m.Dest != "/run/sharq/job/"+filepath.Base(m.Source) {
						t.Errorf("mount %+v: the job's own file not in /run/sharq/job", m)
					}
				} else if m.Dest != m.Source {
					t.Errorf("mount %+v not at its host path", m)
				}
				if m.ReadOnly == (m.Source == ckpt) {
					t.Errorf("mount %+v: only the checkpoint dir is writable", m)
				}
			}
			if c.check != nil {
				c.check(t, dir, o, spec.Args, spec.Devices)
			}
		})
	}
}

func TestCheckpointDir(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, root string)
		wantErr string
	}{
		{name: "made when missing"},
		{
			name: "existing one of the owner kept",
			setup: func(t *testing.T, root string) {
				mustMkdirOwned(t, filepath.Join(root, "1.c"), 1000)
				os.WriteFile(filepath.Join(root, "1.c", "ckpt"), []byte("x"), 0o600)
			},
		},
		{
			name:    "another user's refused",
			setup:   func(t *testing.T, root string) { mustMkdirOwned(t, filepath.Join(root, "1.c"), 1001) },
			wantErr: "belongs to uid 1001",
		},
		{
			name: "symlink refused",
			setup: func(t *testing.T, root string) {
				mustMkdirOwned(t, filepath.Join(root, "elsewhere"), 1000)
				os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "1.c"))
			},
			wantErr: "not a directory",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "ck")
			if c.setup != nil {
				os.MkdirAll(root, 0o755)
				c.setup(t, root)
			}
			dir, err := checkpointDir(root, "1.c", 1000, 1000)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dir != filepath.Join(root, "1.c") {
				t.Errorf("dir %s", dir)
			}
		})
	}
	if _, err := checkpointDir("relative", "1.c", 0, 0); err == nil {
		t.Error("a relative checkpoint root was accepted")
	}
}

func mustMkdirOwned(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
}
