package noded

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// FuzzStartOrder feeds start orders, as the node decodes them from its
// controller connection, to prepareSpec: it never panics; a refusal writes
// nothing; an accepted order gives the container only inventory GPUs (and
// the existing extra devices, only with a GPU), runs as the order's owner,
// writes only below the job's node directory and checkpoint root, gives
// its checkpoint directory to the owner alone, and keeps PBS_NODEFILE
// within maxNodeFile.
func FuzzStartOrder(f *testing.F) {
	seeds := []api.StartOrder{
		{Run: 1, Image: "img", GPUs: []int{2, 0}, NodeList: []string{"n1", "n2"}, Job: api.RunSpec{
			ID: "5.lab", Name: "j", WorkDir: "/w", Stdout: "/w/o", Stderr: "/w/e", Script: "#!/bin/sh\n#PBS -l ngpus=2\necho hi\n",
			Owner:     api.Owner{User: "u", UID: 1000, GID: 1001, Groups: []uint32{1001, 2000}},
			Env:       map[string]string{"PBS_O_HOME": "/home/u", "A": "b"},
			Resources: api.RunResources{CPUsPerNode: 4, MemPerNode: 1 << 30, MPIProcs: 4},
		}},
		{Image: "host", Job: api.RunSpec{ID: "6[3].lab", WorkDir: "/", Command: []string{"true"}, Owner: api.Owner{UID: 1, GID: 1}}},
		{Image: "img", Job: api.RunSpec{ID: "7.lab", WorkDir: "/w", Interactive: true, Shell: "/bin/bash", Owner: api.Owner{UID: 1000, GID: 1000}}},
		{Image: "img", GPUs: []int{3}, Job: api.RunSpec{ID: "..", WorkDir: "w", Script: "x"}},
		{Image: "img", NodeList: []string{"n1"}, Job: api.RunSpec{ID: "8.lab", WorkDir: "/w", Script: "x", Resources: api.RunResources{MPIProcs: 1 << 40}}},
	}
	for _, o := range seeds {
		b, err := json.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"job":{"id":"9.lab","workdir":"/w","command":["x"],"resources":{"mpiprocs":4096}},"image":"i","node_list":["` +
		strings.Repeat(`a","`, 5000) + `a"]}`))
	inv := []api.GPU{{Index: 0, Device: "/dev/fake0"}, {Index: 1, Device: "/dev/fake1"}, {Index: 2, Device: "/dev/fake2"}, {Index: 3}}
	extra := []string{"/dev/null", "/dev/no-such-device"}
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		var o api.StartOrder
		if json.Unmarshal(data, &o) != nil {
			return
		}
		dir := filepath.Join(base, "run")
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		jobs, ckptRoot := filepath.Join(dir, "jobs"), filepath.Join(dir, "ckpt")
		in := specInput{Node: "n1", GPUs: inv, ExtraDevices: extra, CheckpointRoot: ckptRoot, JobDir: filepath.Join(jobs, "x")}
		if checkJobID(o.Job.ID) == nil {
			in.JobDir = filepath.Join(jobs, o.Job.ID)
		}
		spec, err := prepareSpec(&o, in)
		if err != nil {
			if errors.Is(err, ErrBadOrder) {
				if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
					t.Fatalf("refused (%v), yet wrote into %s", err, dir)
				}
			}
			return
		}
		if spec.JobID != o.Job.ID || spec.UID != o.Job.Owner.UID || spec.GID != o.Job.Owner.GID || !filepath.IsAbs(spec.WorkDir) {
			t.Fatalf("spec %+v for order %+v", spec, o)
		}
		var want []string
		for _, i := range o.GPUs {
			want = append(want, inv[i].Device)
		}
		if len(want) > 0 {
			want = append(want, "/dev/null")
		}
		if !slices.Equal(spec.Devices, want) {
			t.Fatalf("devices %q for GPUs %v, want %q", spec.Devices, o.GPUs, want)
		}
		ckpt := filepath.Join(ckptRoot, o.Job.ID)
		fi, err := os.Lstat(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || st.Uid != o.Job.Owner.UID || st.Gid != o.Job.Owner.GID {
			t.Fatalf("checkpoint dir %s: mode %v owner %d:%d", ckpt, fi.Mode(), st.Uid, st.Gid)
		}
		if fi, err := os.Stat(filepath.Join(in.JobDir, nodeFileName)); err != nil || fi.Size() > maxNodeFile {
			t.Fatalf("node file: %v", err)
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if p == dir || p == jobs || p == ckptRoot {
				return nil
			}
			if !strings.HasPrefix(p, in.JobDir+"/") && p != in.JobDir && !strings.HasPrefix(p, ckptRoot+"/") {
				t.Fatalf("wrote %s, outside %s and %s", p, in.JobDir, ckptRoot)
			}
			return nil
		})
	})
}
