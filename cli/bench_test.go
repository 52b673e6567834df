package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// BenchmarkQstatTables formats 100,000 jobs as qstat and qstat -a do (to a
// pipe: fixed widths, no colour), from their summary lines.
func BenchmarkQstatTables(b *testing.B) {
	var lines []byte
	for i := 0; i < 100000; i++ {
		j := api.Job{ID: fmt.Sprintf("%d.lab", i+1), Name: "train-resnet", Owner: api.Owner{User: "alice"},
			State: api.StateQueued, Share: "vision", Resources: api.Resources{Nodes: 1, GPUsPerNode: 4, Walltime: time.Hour},
			Reason: "QuotaExhausted"}
		if i%10 == 0 {
			j.State, j.StartTime = api.StateRunning, testNow.Add(-time.Minute)
			j.Allocs = []api.Alloc{{Node: "gpu001", GPUs: []int{0, 1, 2, 3}}}
		}
		lines = api.AppendSummary(lines, &j)
	}
	sys := &Sys{Now: func() time.Time { return testNow }, Location: time.UTC}
	for _, tc := range []struct {
		name  string
		write func([]api.JobSummary) error
	}{
		{"plain", func(js []api.JobSummary) error { return writeJobTable(io.Discard, js, sys, tableView{}) }},
		{"alt", func(js []api.JobSummary) error { return writeJobTableAlt(io.Discard, js, sys, tableView{}) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				jobs, err := api.ParseSummaries(string(lines))
				if err != nil {
					b.Fatal(err)
				}
				if err := tc.write(jobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQsubHold is the command-line work of one `qsub -h job.sh` (with
// two #PBS lines) up to the request it sends: option parsing, directives,
// the job's environment. A qsub process does it once; the controller
// round trip is a recorder.
func BenchmarkQsubHold(b *testing.B) {
	benchQsub(b, "#!/bin/sh\n#PBS -N bench\n#PBS -l ngpus=1,walltime=1:00:00\ntrue\n")
}

// BenchmarkQsubDirectives is BenchmarkQsubHold with a training script's
// eight #PBS lines, as sites write them (one option a line).
func BenchmarkQsubDirectives(b *testing.B) {
	benchQsub(b, "#!/bin/bash\n#PBS -N train\n#PBS -q vision\n#PBS -l select=1:ngpus=4:ncpus=16:mem=64gb\n"+
		"#PBS -l walltime=12:00:00\n#PBS -j oe\n#PBS -o logs/\n#PBS -V\n#PBS -m abe\n\ncd $PBS_O_WORKDIR\npython train.py\n")
}

// benchQsub runs `qsub -h job.sh` with body as job.sh, up to the request.
func benchQsub(b *testing.B, body string) {
	dir := b.TempDir()
	script := dir + "/job.sh"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	sys := &Sys{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: dir, Host: "login1",
		Environ: []string{"HOME=/home/alice", "LOGNAME=alice", "PATH=/usr/bin:/bin", "SHELL=/bin/bash"},
		Now:     func() time.Time { return testNow }, Location: time.UTC,
		Call: func(context.Context, api.Request) (*api.Response, error) {
			return &api.Response{V: api.Version, JobID: "1.lab"}, nil
		}}
	for b.Loop() {
		if code := Qsub(context.Background(), []string{"qsub", "-h", "job.sh"}, sys); code != 0 {
			b.Fatalf("qsub exited %d", code)
		}
	}
}
