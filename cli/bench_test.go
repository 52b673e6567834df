package cli

import (
	"fmt"
	"io"
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
		{"plain", func(js []api.JobSummary) error { return writeJobTable(io.Discard, js, sys, false) }},
		{"alt", func(js []api.JobSummary) error { return writeJobTableAlt(io.Discard, js, sys, false) }},
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
