package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestQsubInteractiveSpec: qsub -I submits an interactive job with the
// script's directives but not its body, leaves stdin to the session, and
// says why when the job ends before it starts.
func TestQsubInteractiveSpec(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		gpus    int
		command []string
	}{
		{"shell, directives of a script", []string{"-I", "job.sh"}, 2, nil},
		{"command", []string{"-I", "-l", "ngpus=1", "--", "python3", "-c", "print(1)"}, 1, []string{"python3", "-c", "print(1)"}},
		{"directive -I", []string{"inter.sh"}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSys(t)
			os.WriteFile(filepath.Join(s.Dir, "job.sh"), []byte("#!/bin/sh\n#PBS -l ngpus=2\n#PBS -N dbg\nrm -rf /\n"), 0o644)
			os.WriteFile(filepath.Join(s.Dir, "inter.sh"), []byte("#!/bin/sh\n#PBS -I\n#PBS -l ngpus=3\nrm -rf /\n"), 0o644)
			stdin := strings.NewReader("nvidia-smi\n")
			s.Stdin = stdin
			s.rec.reply = func(r api.Request) (*api.Response, error) {
				switch r.Op {
				case api.OpSubmit:
					return &api.Response{V: api.Version, JobID: "5.lab"}, nil
				case api.OpStat:
					return &api.Response{V: api.Version, Jobs: []api.Job{{ID: "5.lab", State: api.StateFinished, Reason: "Deleted"}}}, nil
				}
				return &api.Response{V: api.Version}, nil
			}
			code := Qsub(context.Background(), append([]string{"qsub"}, tc.args...), s.Sys)
			if code != ExitFailure || !strings.Contains(s.err.String(), "qsub: waiting for job 5.lab to start") ||
				!strings.Contains(s.err.String(), "job 5.lab ended before it started: Deleted") {
				t.Fatalf("exit %d, stderr %q", code, s.err.String())
			}
			if s.out.Len() != 0 {
				t.Errorf("stdout %q: qsub -I prints the id on stderr only", s.out.String())
			}
			j := s.rec.reqs[0].Submit.Job
			if !j.Interactive || j.Script != "" || j.Resources.GPUsPerNode != tc.gpus || !slices.Equal(j.Command, tc.command) {
				t.Errorf("submitted %+v", j)
			}
			if stdin.Len() != len("nvidia-smi\n") {
				t.Errorf("qsub -I read its stdin before the session")
			}
		})
	}
}

// TestQsubInteractiveInterrupted: Ctrl-C while the job waits deletes it.
func TestQsubInteractiveInterrupted(t *testing.T) {
	s := newTestSys(t)
	ctx, cancel := context.WithCancel(context.Background())
	s.rec.reply = func(r api.Request) (*api.Response, error) {
		switch r.Op {
		case api.OpSubmit:
			return &api.Response{V: api.Version, JobID: "6.lab"}, nil
		case api.OpStat:
			cancel() // the user presses Ctrl-C while it is queued
			return &api.Response{V: api.Version, Jobs: []api.Job{{ID: "6.lab", State: api.StateQueued}}}, nil
		}
		return &api.Response{V: api.Version}, nil
	}
	code := Qsub(ctx, []string{"qsub", "-I"}, s.Sys)
	last := s.rec.reqs[len(s.rec.reqs)-1]
	if code != 130 || last.Op != api.OpDelete || !slices.Equal(last.IDs, []string{"6.lab"}) || !strings.Contains(s.err.String(), "job 6.lab deleted") {
		t.Fatalf("exit %d, last request %+v, stderr %q", code, last, s.err.String())
	}
}
