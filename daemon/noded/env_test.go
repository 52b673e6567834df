package noded

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestBuildEnv(t *testing.T) {
	base := func() *api.StartOrder {
		return &api.StartOrder{
			Run: 2,
			Job: api.RunSpec{
				ID: "12.lab", Name: "train", Share: "teamA", WorkDir: "/home/u/w",
				Owner: api.Owner{User: "u", UID: 1000, GID: 1000},
			},
		}
	}
	gpu := func(i int, uuid string) api.GPU {
		return api.GPU{Index: i, UUID: uuid, Device: "/dev/nvidia" + string(rune('0'+i))}
	}
	cases := []struct {
		name  string
		order func() *api.StartOrder
		gpus  []api.GPU
		want  map[string]string // "" value with key "-X" means X must be absent
	}{
		{
			name:  "no GPUs",
			order: base,
			want: map[string]string{
				"PBS_JOBID": "12.lab", "PBS_JOBNAME": "train", "PBS_O_WORKDIR": "/home/u/w", "PBS_QUEUE": "teamA",
				"PBS_NODEFILE": "/s/nodefile", "SHARQ_RESTART_COUNT": "2", "SHARQ_CHECKPOINT_DIR": "/ck/12.lab",
				"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void", "SHARQ_GPUS": "",
				"USER": "u", "LOGNAME": "u", "HOME": "/home/u/w", "PATH": defaultPath, "SHARQ_NODE": "n1",
				"-PBS_ARRAY_INDEX": "", "-PBS_ARRAY_ID": "", "-CUDA_DEVICE_ORDER": "",
			},
		},
		{
			name:  "GPUs with UUIDs",
			order: base,
			gpus:  []api.GPU{gpu(2, "GPU-a"), gpu(3, "GPU-b")},
			want: map[string]string{
				"CUDA_VISIBLE_DEVICES": "2,3", "NVIDIA_VISIBLE_DEVICES": "GPU-a,GPU-b", "SHARQ_GPUS": "2,3",
				"CUDA_DEVICE_ORDER": "PCI_BUS_ID",
			},
		},
		{
			name:  "GPUs without UUIDs",
			order: base,
			gpus:  []api.GPU{gpu(5, ""), gpu(1, "")},
			want:  map[string]string{"CUDA_VISIBLE_DEVICES": "5,1", "NVIDIA_VISIBLE_DEVICES": "5,1"},
		},
		{
			name: "array subjob",
			order: func() *api.StartOrder {
				o := base()
				o.Job.ID, o.Job.ArrayParent, o.Job.ArrayIndex = "7[3].lab", "7[].lab", 3
				return o
			},
			want: map[string]string{"PBS_JOBID": "7[3].lab", "PBS_ARRAY_ID": "7[].lab", "PBS_ARRAY_INDEX": "3"},
		},
		{
			name: "job environment kept, ours win, bad names dropped",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Env = map[string]string{
					"PATH": "/opt/bin", "HOME": "/home/u", "FOO": "bar", "PBS_JOBID": "forged",
					"CUDA_VISIBLE_DEVICES": "0,1,2,3", "1BAD": "x", "A=B": "x", "NUL": "a\x00b",
					"PBS_O_HOST": "login1",
				}
				return o
			},
			want: map[string]string{
				"PATH": "/opt/bin", "HOME": "/home/u", "FOO": "bar", "PBS_JOBID": "12.lab", "PBS_O_HOST": "login1",
				"CUDA_VISIBLE_DEVICES": "", "-1BAD": "", "-A": "", "-NUL": "",
			},
		},
		{
			name: "CPUs",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Resources.CPUsPerNode = 6
				return o
			},
			want: map[string]string{"NCPUS": "6", "OMP_NUM_THREADS": "6"},
		},
		{
			name: "CPUs over MPI ranks",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Resources.CPUsPerNode, o.Job.Resources.MPIProcs = 16, 4
				return o
			},
			want: map[string]string{"NCPUS": "16", "OMP_NUM_THREADS": "4"},
		},
		{
			name: "more ranks than CPUs",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Resources.CPUsPerNode, o.Job.Resources.MPIProcs = 2, 8
				return o
			},
			want: map[string]string{"OMP_NUM_THREADS": "1"},
		},
		{
			name: "ompthreads",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Resources.CPUsPerNode, o.Job.Resources.MPIProcs, o.Job.Resources.OMPThreads = 16, 4, 2
				return o
			},
			want: map[string]string{"OMP_NUM_THREADS": "2"},
		},
		{
			name: "the job's own OMP_NUM_THREADS wins",
			order: func() *api.StartOrder {
				o := base()
				o.Job.Resources.OMPThreads = 2
				o.Job.Env = map[string]string{"OMP_NUM_THREADS": "7"}
				return o
			},
			want: map[string]string{"OMP_NUM_THREADS": "7"},
		},
		{
			name:  "no CPUs, no threads",
			order: base,
			want:  map[string]string{"-OMP_NUM_THREADS": ""},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := buildEnv(c.order(), jobEnv{Node: "n1", NodeFile: "/s/nodefile", CheckpointDir: "/ck/12.lab", GPUs: c.gpus})
			for i := 1; i < len(env); i++ {
				if env[i-1] >= env[i] {
					t.Errorf("environment not sorted or has duplicates: %q before %q", env[i-1], env[i])
				}
			}
			m := envMap(env)
			for k, want := range c.want {
				if name, ok := strings.CutPrefix(k, "-"); ok {
					if v, present := m[name]; present {
						t.Errorf("%s=%q present, want absent", name, v)
					}
					continue
				}
				if got, ok := m[k]; !ok || got != want {
					t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
				}
			}
		})
	}
}

func TestValidEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"A": true, "_": true, "a_1": true, "PBS_O_HOME": true,
		"": false, "1A": false, "A-B": false, "A=B": false, "A B": false, "É": false,
	} {
		if got := validEnvName(name); got != want {
			t.Errorf("validEnvName(%q) = %v, want %v", name, got, want)
		}
	}
}
