package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

const testScript = "#!/bin/sh\necho hi\n"

func baseEnv(dir string) map[string]string {
	return map[string]string{
		"PBS_O_HOME": "/home/alice", "PBS_O_LOGNAME": "alice", "PBS_O_PATH": "/usr/bin:/bin",
		"PBS_O_SHELL": "/bin/bash", "PBS_O_LANG": "C.UTF-8", "PBS_O_WORKDIR": dir, "PBS_O_HOST": "login1",
	}
}

func submitted(t *testing.T, ts *testSys) api.JobSpec {
	t.Helper()
	if len(ts.rec.reqs) == 0 {
		t.Fatal("no request sent")
	}
	req := ts.rec.reqs[0]
	if req.Op != api.OpSubmit || req.Submit == nil || req.V != api.Version {
		t.Fatalf("request %+v is not a submit", req)
	}
	return req.Submit.Job
}

func TestQsubJob(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		files   map[string]string // created in the working directory
		stdin   string
		environ []string // added to the test environment
		want    func(dir string, j *api.JobSpec)
		stderr  string // expected on stderr (substring)
	}{
		{
			name: "script file", args: []string{"job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {},
		},
		{
			name: "all options",
			args: []string{"-N", "train", "-q", "vision", "-l", "ngpus=4,ncpus=16,mem=64gb", "-l", "walltime=12:00:00",
				"-p", "50", "-o", "out/train.log", "-e", "/tmp/err.log", "-v", "A=1,CUDA_HOME,NOPE", "-h",
				"--image", "pytorch:24.05", "-W", "grace=300,umask=022", "-W", "depend=afterok:10:11.lab,afterany:12", "-J", "0-99:2%10",
				"-a", "2330", "job.sh"},
			files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Share = "train", "vision"
				j.Resources = api.Resources{Nodes: 1, GPUsPerNode: 4, CPUsPerNode: 16, MemPerNode: 64 << 30, Walltime: 12 * time.Hour}
				j.Stdout, j.Stderr = filepath.Join(dir, "out/train.log"), "/tmp/err.log"
				j.Env["A"], j.Env["CUDA_HOME"], j.Env["NOPE"] = "1", "/opt/cuda", ""
				j.Hold, j.Image, j.Grace, j.Umask = "u", "pytorch:24.05", 300*time.Second, "022"
				j.Deps = []api.Dep{{Type: jobid.AfterOK, On: "10"}, {Type: jobid.AfterOK, On: "11.lab"}, {Type: jobid.AfterAny, On: "12"}}
				j.ArrayIndices, j.ArrayMax = indices("0-99:2"), 10
				j.NotBefore = time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
			},
		},
		{
			name:  "directives",
			args:  []string{"job.sh"},
			files: map[string]string{"job.sh": "#!/bin/bash\n#PBS -N fromdir\n#PBS -l select=2:ngpus=8:ncpus=32\n#PBS -l walltime=1:00:00\n#PBS -q research -p 7\n#PBS -j oe -o logs\n#PBS -W depend=afterok:5,umask=027 -V\ncd $PBS_O_WORKDIR\n#PBS -N ignored\n"},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Share = "fromdir", "research"
				j.Script = "#!/bin/bash\n#PBS -N fromdir\n#PBS -l select=2:ngpus=8:ncpus=32\n#PBS -l walltime=1:00:00\n#PBS -q research -p 7\n#PBS -j oe -o logs\n#PBS -W depend=afterok:5,umask=027 -V\ncd $PBS_O_WORKDIR\n#PBS -N ignored\n"
				j.Umask = "027"
				j.Resources = api.Resources{Nodes: 2, GPUsPerNode: 8, CPUsPerNode: 32, Walltime: time.Hour}
				j.Join, j.Stdout = "oe", filepath.Join(dir, "logs") // the controller joins stderr (api.OutputPaths)
				j.Deps = []api.Dep{{Type: jobid.AfterOK, On: "5"}}
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda"} {
					j.Env[k] = v
				}
			},
		},
		{
			name:  "command line wins over directives",
			args:  []string{"-N", "fromcli", "-l", "ngpus=4", "-q", "cliq", "-W", "depend=afterany:9", "job.sh"},
			files: map[string]string{"job.sh": "#PBS -N fromdir -q dirq\n#PBS -l select=2:ngpus=8,walltime=2:00:00\n#PBS -W depend=afterok:5\n#PBS -h\nrun\n"},
			want: func(dir string, j *api.JobSpec) {
				j.Script = "#PBS -N fromdir -q dirq\n#PBS -l select=2:ngpus=8,walltime=2:00:00\n#PBS -W depend=afterok:5\n#PBS -h\nrun\n"
				j.Name, j.Share, j.Hold = "fromcli", "cliq", "u"
				j.Resources = api.Resources{Nodes: 2, GPUsPerNode: 4, Walltime: 2 * time.Hour}
				j.Deps = []api.Dep{{Type: jobid.AfterAny, On: "9"}}
			},
		},
		{
			name:  "-V and -h survive later directives",
			args:  []string{"job.sh"},
			files: map[string]string{"job.sh": "#!/bin/sh\n#PBS -V\n#PBS -h\n#PBS -N later\n#PBS -l ngpus=1\nrun\n"},
			want: func(dir string, j *api.JobSpec) {
				j.Script = "#!/bin/sh\n#PBS -V\n#PBS -h\n#PBS -N later\n#PBS -l ngpus=1\nrun\n"
				j.Name, j.Hold = "later", "u"
				j.Resources.GPUsPerNode = 1
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda"} {
					j.Env[k] = v
				}
			},
		},
		{
			name: "stdin", stdin: "#PBS -l ngpus=1\nnvidia-smi\n",
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Script = "STDIN", "#PBS -l ngpus=1\nnvidia-smi\n"
				j.Resources.GPUsPerNode = 1
			},
		},
		{
			name: "command", args: []string{"-l", "ngpus=2", "--", "/usr/bin/python3", "train.py", "--lr", "0.1"},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Script, j.Command = "python3", "", []string{"/usr/bin/python3", "train.py", "--lr", "0.1"}
				j.Resources.GPUsPerNode = 2
			},
		},
		{
			name: "attached values", args: []string{"-Nshort", "-joe", "-lngpus=1", "-qfast", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Join, j.Share = "short", "oe", "fast"
				j.Resources.GPUsPerNode = 1
			},
		},
		{
			name: "combined short options", args: []string{"-hVkoe", "-Nshort", "-Vq", "fast", "job.sh", "-hjoe"}, files: map[string]string{"job.sh": "#PBS -hlngpus=2\nrun\n"},
			stderr: "-k (keep output on the execution host (sharq writes it in place)) is not supported and was ignored",
			want: func(dir string, j *api.JobSpec) {
				j.Script = "#PBS -hlngpus=2\nrun\n"
				j.Name, j.Join, j.Share, j.Hold = "short", "oe", "fast", "u"
				j.Resources.GPUsPerNode = 2
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda"} {
					j.Env[k] = v
				}
			},
		},
		{
			name: "fractional sizes", args: []string{"-l", "mem=2.0gb", "-l", "select=1:ngpus=1:mem=1.5gb", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Resources.GPUsPerNode, j.Resources.MemPerNode = 1, 3<<29
			},
		},
		{
			name: "fractional size alone", args: []string{"-l", "mem=2.0gb", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Resources.MemPerNode = 2 << 30
			},
		},
		{
			name: "combined options stop at --", args: []string{"-hN", "x", "--", "/bin/echo", "-hN", "y"},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Hold, j.Script, j.Command = "x", "u", "", []string{"/bin/echo", "-hN", "y"}
			},
		},
		{
			// Both paths go; the controller keeps the error path (api.OutputPaths).
			name: "join eo sends both paths", args: []string{"-j", "eo", "-e", "e.log", "-o", "o.log", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Join, j.Stdout, j.Stderr = "eo", filepath.Join(dir, "o.log"), filepath.Join(dir, "e.log")
			},
		},
		{
			name: "join n", args: []string{"-j", "n", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {},
		},
		{
			name: "output directory and host prefix", args: []string{"-o", "logs", "-e", "login1:/var/tmp/x.err", "job.sh"},
			files: map[string]string{"job.sh": testScript, "logs/.keep": ""},
			want: func(dir string, j *api.JobSpec) {
				j.Stdout, j.Stderr = filepath.Join(dir, "logs")+"/", "/var/tmp/x.err"
			},
		},
		{
			name: "output directory that does not exist yet", args: []string{"-o", "logs/", "-e", "/var/tmp/errs/", "job.sh"},
			files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Stdout, j.Stderr = filepath.Join(dir, "logs")+"/", "/var/tmp/errs/"
			},
		},
		{
			name: "array index placeholder", args: []string{"-J", "1-3", "-o", "logs/out.^array_index^.txt", "job.sh"},
			files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Stdout = filepath.Join(dir, "logs/out.^array_index^.txt")
				j.ArrayIndices = indices("1-3")
			},
		},
		{
			name: "torque options", args: []string{"-t", "0-9%2", "-d", "sub", "-l", "wd", "-l", "nodes=1:ppn=4,wd", "-q", "research@lab", "job.sh"},
			files: map[string]string{"job.sh": testScript, "sub/.keep": ""},
			want: func(dir string, j *api.JobSpec) {
				j.ArrayIndices, j.ArrayMax, j.Share = indices("0-9"), 2, "research@lab"
				j.WorkDir = filepath.Join(dir, "sub")
				j.Env["PBS_O_WORKDIR"], j.Env["PBS_O_INITDIR"] = j.WorkDir, j.WorkDir
				j.Resources.CPUsPerNode = 4
			},
		},
		{
			name: "options after the script", args: []string{"job.sh", "-N", "after", "-lngpus=2", "-V"},
			files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Name = "after"
				j.Resources.GPUsPerNode = 2
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda"} {
					j.Env[k] = v
				}
			},
		},
		{
			name: "options after the command stay the command's", args: []string{"-N", "c", "--", "/bin/echo", "-N", "x"},
			want: func(dir string, j *api.JobSpec) {
				j.Name, j.Script, j.Command = "c", "", []string{"/bin/echo", "-N", "x"}
			},
		},
		{
			name: "torque directives", args: []string{"job.sh"},
			files: map[string]string{"job.sh": "#!/bin/bash\n#PBS -t 1-4\n#PBS -l nodes=1:ppn=2:gpus=1\n#PBS -l wd\n#PBS -k oe\nrun\n"},
			want: func(dir string, j *api.JobSpec) {
				j.Script = "#!/bin/bash\n#PBS -t 1-4\n#PBS -l nodes=1:ppn=2:gpus=1\n#PBS -l wd\n#PBS -k oe\nrun\n"
				j.ArrayIndices = indices("1-4")
				j.Resources = api.Resources{Nodes: 1, GPUsPerNode: 1, CPUsPerNode: 2}
			},
			stderr: "qsub: warning: -k (keep output",
		},
		{
			name: "shell", args: []string{"job.sh"},
			files: map[string]string{"job.sh": "#!/bin/bash\n#PBS -S /bin/tcsh@login1,/bin/zsh\nrun\n"},
			want: func(dir string, j *api.JobSpec) {
				j.Script, j.Shell = "#!/bin/bash\n#PBS -S /bin/tcsh@login1,/bin/zsh\nrun\n", "/bin/zsh"
			},
		},
		{
			name: "other directive prefix", args: []string{"-C", "#SQ", "job.sh"}, files: map[string]string{"job.sh": "#PBS -N no\n#SQ -N yes\nrun\n"},
			want: func(dir string, j *api.JobSpec) { j.Name, j.Script = "yes", "#PBS -N no\n#SQ -N yes\nrun\n" },
		},
		{
			name: "PBS_DPREFIX", args: []string{"job.sh"}, environ: []string{"PBS_DPREFIX=#X"}, files: map[string]string{"job.sh": "#PBS -N no\n#X -N yes\nrun\n"},
			want: func(dir string, j *api.JobSpec) { j.Name, j.Script = "yes", "#PBS -N no\n#X -N yes\nrun\n" },
		},
		{
			name: "no directives", args: []string{"-C", "", "job.sh"}, files: map[string]string{"job.sh": "#PBS -N no\nrun\n"},
			want: func(dir string, j *api.JobSpec) { j.Script = "#PBS -N no\nrun\n" },
		},
		{
			name: "ignored options warn", args: []string{"-m", "abe", "-M", "a@b", "job.sh"}, files: map[string]string{"job.sh": "#PBS -r y\nrun\n"},
			want:   func(dir string, j *api.JobSpec) { j.Script = "#PBS -r y\nrun\n" },
			stderr: "qsub: warning: -r (rerunnable",
		},
		{
			name: "subdirectory script", args: []string{"jobs/a b.sh"}, files: map[string]string{"jobs/a b.sh": testScript},
			want: func(dir string, j *api.JobSpec) { j.Name = "a_b.sh" },
		},
		{
			name: "torque nodes and block false", args: []string{"-l", "nodes=2:ppn=8:gpus=4", "-W", "block=false", "job.sh"}, files: map[string]string{"job.sh": testScript},
			want: func(dir string, j *api.JobSpec) {
				j.Resources = api.Resources{Nodes: 2, GPUsPerNode: 4, CPUsPerNode: 8}
			},
		},
		{
			name: "PBS_O vars are not overridden by -V", args: []string{"-V", "job.sh"}, files: map[string]string{"job.sh": testScript},
			environ: []string{"PBS_O_WORKDIR=/elsewhere", "USER=alice"},
			want: func(dir string, j *api.JobSpec) {
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda", "USER": "alice"} {
					j.Env[k] = v
				}
			},
		},
		{
			name: "-V inside a job: the job's PBS_* stay behind", args: []string{"-V", "job.sh"}, files: map[string]string{"job.sh": testScript},
			environ: []string{"PBS_JOBID=7.lab", "PBS_ARRAY_INDEX=3", "PBS_O_TZ=UTC", "PBS_ENVIRONMENT=PBS_BATCH", "USER=alice"},
			want: func(dir string, j *api.JobSpec) {
				for k, v := range map[string]string{"HOME": "/home/alice", "LOGNAME": "alice", "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "CUDA_HOME": "/opt/cuda", "USER": "alice"} {
					j.Env[k] = v
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.Stdin = strings.NewReader(tt.stdin)
			ts.Environ = append(ts.Environ, tt.environ...)
			ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, JobID: "12.lab"}, nil }
			for name, body := range tt.files {
				p := filepath.Join(ts.Dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code := Qsub(context.Background(), append([]string{"qsub"}, tt.args...), ts.Sys)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, ts.err)
			}
			if got := ts.out.String(); got != "12.lab\n" {
				t.Errorf("stdout = %q, want the job id alone", got)
			}
			if tt.stderr == "" && ts.err.Len() > 0 || !strings.Contains(ts.err.String(), tt.stderr) {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			want := api.JobSpec{Name: "job.sh", Script: testScript, WorkDir: ts.Dir, Env: baseEnv(ts.Dir), Resources: api.Resources{Nodes: 1}}
			tt.want(ts.Dir, &want)
			got := submitted(t, ts)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("job:\n got %+v\nwant %+v", got, want)
			}
			if len(ts.rec.reqs) != 1 {
				t.Errorf("%d requests, want 1", len(ts.rec.reqs))
			}
		})
	}
}

// TestQsubPriority checks -p travels on PBS's scale, as the job's PBS
// priority (its order in the share).
func TestQsubPriority(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want *int
	}{
		{"none", []string{"job.sh"}, nil},
		{"above", []string{"-p", "1", "job.sh"}, ptr(1)},
		{"negative", []string{"-p", "-1024", "job.sh"}, ptr(-1024)},
		{"attached", []string{"-p-5", "job.sh"}, ptr(-5)},
		{"top", []string{"-p", "1023", "job.sh"}, ptr(1023)},
		{"combined", []string{"-hp", "7", "job.sh"}, ptr(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, JobID: "12.lab"}, nil }
			if err := os.WriteFile(filepath.Join(ts.Dir, "job.sh"), []byte(testScript), 0o644); err != nil {
				t.Fatal(err)
			}
			if code := Qsub(context.Background(), append([]string{"qsub"}, tt.args...), ts.Sys); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, ts.err)
			}
			spec := ts.rec.reqs[0].Submit
			if spec.Priority != nil {
				t.Errorf("sharq-scale priority %d sent", *spec.Priority)
			}
			if !reflect.DeepEqual(spec.PBSPriority, tt.want) {
				t.Errorf("PBS priority %v, want %v", spec.PBSPriority, tt.want)
			}
		})
	}
}

func TestQsubErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		files  map[string]string
		reply  func(api.Request) (*api.Response, error)
		code   int
		stderr string
	}{
		{name: "unknown option", args: []string{"-x", "job.sh"}, code: ExitUsage, stderr: "qsub: flag provided but not defined: -x\nTry 'qsub --help'"},
		{name: "bad resource", args: []string{"-l", "ngpus=many", "job.sh"}, code: ExitUsage, stderr: `invalid value "ngpus=many" for flag -l: bad resource ngpus=many: want a whole number`},
		{name: "unknown resource", args: []string{"-l", "x-y=1", "job.sh"}, code: ExitUsage, stderr: `unknown resource (known: ngpus, ncpus, mem, walltime, select, nodes, mpiprocs, ompthreads, place, and node labels such as gpu_type)`},
		{name: "priority above PBS's range", args: []string{"-p", "1024", "job.sh"}, code: ExitUsage, stderr: "want a priority from -1024 to 1023 (default 0)"},
		{name: "priority below PBS's range", args: []string{"-p", "-1025", "job.sh"}, code: ExitUsage, stderr: "want a priority from -1024 to 1023"},
		{name: "bad name", args: []string{"-N", "a b", "job.sh"}, code: ExitUsage, stderr: "no blanks"},
		{name: "bad join", args: []string{"-j", "xy", "job.sh"}, code: ExitUsage, stderr: "want oe, eo or n"},
		{name: "unknown W", args: []string{"-W", "sandbox=PRIVATE", "job.sh"}, code: ExitUsage, stderr: `unknown attribute "sandbox" (supported: block, depend, grace, umask)`},
		{name: "bad umask", args: []string{"-W", "umask=0999", "job.sh"}, code: ExitUsage, stderr: `umask "0999": want octal digits`},
		{name: "bad block", args: []string{"-W", "block=maybe", "job.sh"}, code: ExitUsage, stderr: "block=maybe: want true or false"},
		{name: "bad grace", args: []string{"-W", "grace=soon", "job.sh"}, code: ExitUsage, stderr: "grace: bad duration"},
		{name: "bad depend", args: []string{"-W", "depend=afterok:x", "job.sh"}, code: ExitUsage, stderr: `"x" is not a job id`},
		{name: "bad array", args: []string{"-J", "5-1", "job.sh"}, code: ExitUsage, stderr: "start is after end"},
		{name: "bad time", args: []string{"-a", "25:00", "job.sh"}, code: ExitUsage, stderr: "bad date-time"},
		{name: "bad variable", args: []string{"-v", "9X=1", "job.sh"}, code: ExitUsage, stderr: "is not a variable name"},
		{name: "every bad option at once", args: []string{"-l", "ngpus=x", "-p", "5000", "-N", "ok", "-j", "zz", "job.sh"}, code: ExitUsage,
			stderr: "qsub: invalid value \"ngpus=x\" for flag -l: bad resource ngpus=x: want a whole number of at least 0\n" +
				"invalid value \"5000\" for flag -p: \"5000\": want a priority from -1024 to 1023 (default 0)\n" +
				"invalid value \"zz\" for flag -j: \"zz\": want oe, eo or n\n"},
		{name: "every bad directive at once", args: []string{"job.sh"}, code: ExitFailure,
			files: map[string]string{"job.sh": "#!/bin/sh\n#PBS -l ngpus=x -p 5000\n#PBS -N ok\n#PBS -X\nrun\n"},
			stderr: "qsub: job.sh line 2: #PBS -l ngpus=x -p 5000: invalid value \"ngpus=x\" for flag -l: bad resource ngpus=x: want a whole number of at least 0\n" +
				"job.sh line 2: #PBS -l ngpus=x -p 5000: invalid value \"5000\" for flag -p: \"5000\": want a priority from -1024 to 1023 (default 0)\n" +
				"job.sh line 4: #PBS -X: -X (X11 forwarding) is not supported\n"},
		{name: "X11", args: []string{"-X", "job.sh"}, code: ExitUsage, stderr: "-X (X11 forwarding) is not supported"},
		{name: "interactive array", args: []string{"-I", "-J", "1-3"}, code: ExitUsage, stderr: "-I and -J: an interactive job cannot be an array job"},
		{name: "torque array list", args: []string{"-t", "1,3,5", "job.sh"}, code: ExitUsage, stderr: `bad array range "1,3,5": want start-end`},
		{name: "relative shell", args: []string{"-S", "bash", "job.sh"}, code: ExitUsage, stderr: `"bash": want the absolute path of a shell`},
		{name: "missing script", args: []string{"nope.sh"}, code: ExitFailure, stderr: "qsub: reading script: open"},
		{name: "empty script", args: []string{"job.sh"}, files: map[string]string{"job.sh": "\n  \n"}, code: ExitFailure, stderr: "script job.sh is empty"},
		{name: "binary script", args: []string{"a.out"}, files: map[string]string{"a.out": "\x7fELF\x00\x01"}, code: ExitFailure, stderr: "binary file; to run a program, use qsub [options] -- a.out"},
		{name: "arguments after script", args: []string{"job.sh", "x"}, code: ExitUsage, stderr: "unexpected arguments after the script job.sh"},
		{name: "nothing after dashes", args: []string{"--"}, code: ExitUsage, stderr: "no command after --"},
		{name: "bad directive", args: []string{"job.sh"}, files: map[string]string{"job.sh": "#!/bin/sh\n#PBS -l ngpus=x\n"}, code: ExitFailure,
			stderr: "qsub: job.sh line 2: #PBS -l ngpus=x: invalid value \"ngpus=x\" for flag -l"},
		{name: "directive operand", args: []string{"job.sh"}, files: map[string]string{"job.sh": "#PBS -N a extra\n"}, code: ExitFailure,
			stderr: `job.sh line 1: #PBS -N a extra: unexpected "extra"`},
		{name: "directive cannot set prefix", args: []string{"job.sh"}, files: map[string]string{"job.sh": "#PBS -C #X\n"}, code: ExitFailure,
			stderr: "flag provided but not defined: -C"},
		{name: "directive quote", args: []string{"job.sh"}, files: map[string]string{"job.sh": "#PBS -N 'x\n"}, code: ExitFailure,
			stderr: "job.sh: bad directive on line 1: unterminated single quote"},
		{name: "controller refuses", args: []string{"job.sh"}, code: ExitFailure, stderr: "qsub: unknown share \"nope\"\n",
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeBadRequest, Message: `unknown share "nope"`}})
			}},
		{name: "never runs", args: []string{"-l", "ngpus=99", "job.sh"}, code: ExitResourceLimit,
			stderr: "qsub: Job violates queue and/or server resource limits (select=1:ngpus=99: partition gpu has no node that large)\n",
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeResourceLimit, Message: "Job violates queue and/or server resource limits (select=1:ngpus=99: partition gpu has no node that large)"}})
			}},
		{name: "controller away", args: []string{"job.sh"}, code: ExitFailure, stderr: "qsub: cannot reach sharqctld",
			reply: func(api.Request) (*api.Response, error) { return nil, errors.New("cannot reach sharqctld at /x") }},
		{name: "no job id", args: []string{"job.sh"}, code: ExitFailure, stderr: "returned no job id",
			reply: func(api.Request) (*api.Response, error) { return &api.Response{V: 1}, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = tt.reply
			if tt.files == nil {
				tt.files = map[string]string{"job.sh": testScript}
			}
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(ts.Dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code := Qsub(context.Background(), append([]string{"qsub"}, tt.args...), ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if !strings.Contains(ts.err.String(), tt.stderr) {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			if ts.out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", ts.out)
			}
			if tt.reply == nil && len(ts.rec.reqs) != 0 {
				t.Errorf("sent %d requests for a bad submission", len(ts.rec.reqs))
			}
		})
	}
}

func TestQsubBlock(t *testing.T) {
	exit := func(n int) *int { return &n }
	tests := []struct {
		name   string
		waits  []func() (*api.Response, error) // answers to successive waits
		code   int
		stderr string
	}{
		{name: "success", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, ExitStatus: exit(0)}}}, nil
			}}, code: 0},
		{name: "job's status", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, ExitStatus: exit(3)}}}, nil
			}}, code: 3},
		{name: "killed by signal", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, ExitStatus: exit(256 + 9)}}}, nil
			}}, code: 137},
		{name: "could not run", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, ExitStatus: exit(-1)}}}, nil
			}}, code: 1, stderr: "qsub: job 12.lab could not run (exit status -1)"},
		{name: "deleted", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, Reason: "DependencyNeverSatisfied"}}}, nil
			}}, code: 1, stderr: "ended without an exit status (DependencyNeverSatisfied)"},
		{name: "reconnects", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return nil, errors.New("cannot reach sharqctld at /s: connection refused")
			},
			func() (*api.Response, error) {
				return nil, errors.New("cannot reach sharqctld at /s: connection refused")
			},
			func() (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{{ID: "12.lab", State: api.StateFinished, ExitStatus: exit(0)}}}, nil
			}}, code: 0, stderr: "qsub: waiting for 12.lab: cannot reach sharqctld at /s: connection refused; retrying\n"},
		{name: "refused", waits: []func() (*api.Response, error){
			func() (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id 12.lab", ID: "12.lab"}})
			}}, code: ExitUnknownJob, stderr: "qsub: waiting for 12.lab: Unknown Job Id 12.lab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.RetryDelay = time.Millisecond
			ts.Stdin = strings.NewReader("sleep 1\n")
			waits := 0
			ts.rec.reply = func(req api.Request) (*api.Response, error) {
				if req.Op == api.OpSubmit {
					return &api.Response{V: 1, JobID: "12.lab"}, nil
				}
				if req.Op != api.OpWait || !reflect.DeepEqual(req.IDs, []string{"12.lab"}) {
					t.Errorf("unexpected request %+v", req)
				}
				waits++
				return tt.waits[waits-1]()
			}
			code := Qsub(context.Background(), []string{"qsub", "-W", "block=true"}, ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if ts.out.String() != "12.lab\n" {
				t.Errorf("stdout = %q", ts.out)
			}
			if !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			if waits != len(tt.waits) {
				t.Errorf("%d waits, want %d", waits, len(tt.waits))
			}
		})
	}
}

func TestQsubBlockInterrupted(t *testing.T) {
	ts := newTestSys(t)
	ts.Stdin = strings.NewReader("sleep 1\n")
	ctx, cancel := context.WithCancel(context.Background())
	ts.rec.reply = func(req api.Request) (*api.Response, error) {
		if req.Op == api.OpSubmit {
			return &api.Response{V: 1, JobID: "12.lab"}, nil
		}
		cancel()
		return nil, context.Canceled
	}
	if code := Qsub(ctx, []string{"qsub", "-W", "block=true"}, ts.Sys); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	if !strings.Contains(ts.err.String(), "stopped waiting for 12.lab (the job itself is not affected)") {
		t.Errorf("stderr = %q", ts.err)
	}
}

func TestQsubHelp(t *testing.T) {
	ts := newTestSys(t)
	if code := Qsub(context.Background(), []string{"qsub", "--help"}, ts.Sys); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"qsub [options] [script]", "Examples:", "-h ", "submit the job held", "-W ATTR=VALUE", "select=2:ngpus=8"} {
		if !strings.Contains(ts.out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, ts.out)
		}
	}
	if len(ts.rec.reqs) != 0 {
		t.Error("help sent a request")
	}
}

// TestQsubScripts submits the job scripts under testdata/scripts (written
// in the styles of PBS Pro and Torque sites) and compares the request qsub
// sends, or its refusal, with the golden file next to each
// (go test ./cli -update rewrites them).
func TestQsubScripts(t *testing.T) {
	scripts, err := filepath.Glob("testdata/scripts/*.pbs")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".pbs")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ts := newTestSys(t)
			ts.Dir = "/home/alice/exp" // not read: the script is given by its path below
			ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, JobID: "12.lab"}, nil }
			script := filepath.Join(t.TempDir(), name+".pbs")
			if err := os.WriteFile(script, body, 0o644); err != nil {
				t.Fatal(err)
			}
			code := Qsub(context.Background(), []string{"qsub", script}, ts.Sys)
			var out strings.Builder
			fmt.Fprintf(&out, "exit %d\n", code)
			if s := strings.ReplaceAll(ts.err.String(), filepath.Dir(script)+"/", ""); s != "" {
				fmt.Fprintf(&out, "stderr:\n%s", s)
			}
			if len(ts.rec.reqs) > 0 {
				spec := ts.rec.reqs[0].Submit
				spec.Job.Script = fmt.Sprintf("(%d bytes)", len(spec.Job.Script))
				b, err := json.MarshalIndent(spec, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&out, "request:\n%s\n", b)
			}
			golden(t, "scripts/"+name+".golden", out.String())
		})
	}
}

// TestQsubInterrupts: qsub asks for the signal-watching context only for
// what waits (-W block=true, -I), after the submission, and that context
// ending (SIGINT) stops the wait as an interrupted qsub does; a plain
// submission installs no signal handler.
func TestQsubInterrupts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		asked  bool
		code   int
		stderr string
	}{
		{name: "plain", args: []string{"-h"}, code: 0},
		{name: "quiet", args: []string{"-z"}, code: 0},
		{name: "block", args: []string{"-W", "block=true"}, asked: true, code: 130, stderr: "stopped waiting for 7.lab"},
		{name: "interactive", args: []string{"-I"}, asked: true, code: 130, stderr: "job 7.lab deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.Stdin = strings.NewReader("true\n")
			asked, submitted := 0, false
			var interrupt context.CancelFunc
			ts.Interrupts = func(ctx context.Context) (context.Context, context.CancelFunc) {
				asked++
				if !submitted {
					t.Error("asked for signals before the job was submitted")
				}
				ctx, interrupt = context.WithCancel(ctx)
				return ctx, interrupt
			}
			ts.rec.reply = func(req api.Request) (*api.Response, error) {
				switch req.Op {
				case api.OpSubmit:
					submitted = true
					return &api.Response{V: 1, JobID: "7.lab"}, nil
				case api.OpWait, api.OpStat:
					interrupt() // the user presses Ctrl-C while qsub waits
					return nil, context.Canceled
				}
				return &api.Response{V: 1}, nil
			}
			code := Qsub(context.Background(), append([]string{"qsub"}, tc.args...), ts.Sys)
			if want := map[bool]int{false: 0, true: 1}[tc.asked]; asked != want {
				t.Errorf("Interrupts called %d times, want %d", asked, want)
			}
			if code != tc.code || !strings.Contains(ts.err.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, ts.err, tc.code, tc.stderr)
			}
		})
	}
}

// TestOSInterrupts: the real process's Interrupts ends its context on
// SIGINT (caught, so the test process lives on).
func TestOSInterrupts(t *testing.T) {
	ctx, stop := OS(nil).Interrupts(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGINT did not end the context")
	}
}
