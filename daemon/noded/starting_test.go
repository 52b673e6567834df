package noded

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/runtime"
)

func TestStartingOverlay(t *testing.T) {
	running := func(id string, run int) runtime.Task {
		return runtime.Task{JobID: id, Node: "n1", Run: run, Running: true}
	}
	cases := []struct {
		name  string
		tasks []runtime.Task
		snap  map[string]int
		want  []runtime.Task
	}{
		{"nothing starting", []runtime.Task{running("1.t", 0)}, nil, []runtime.Task{running("1.t", 0)}},
		{"not made yet: added", nil, map[string]int{"2.t": 0}, []runtime.Task{running("2.t", 0)}},
		{"task created, not started: not an exit", []runtime.Task{{JobID: "2.t", Node: "n1", Run: 0, ExitStatus: runtime.ExitStatusLost}},
			map[string]int{"2.t": 0}, []runtime.Task{running("2.t", 0)}},
		{"started meanwhile", []runtime.Task{running("2.t", 0)}, map[string]int{"2.t": 0}, []runtime.Task{running("2.t", 0)}},
		{"an earlier run's container: replaced", []runtime.Task{{JobID: "3.t", Node: "n1", Run: 0, ExitStatus: 143}},
			map[string]int{"3.t": 1}, []runtime.Task{running("3.t", 1)}},
		{"a later run listed stays", []runtime.Task{running("4.t", 2)}, map[string]int{"4.t": 1}, []runtime.Task{running("4.t", 2), running("4.t", 1)}},
		{"others untouched", []runtime.Task{{JobID: "5.t", Node: "n1", Run: 0, ExitStatus: 3}, running("6.t", 0)},
			map[string]int{"7.t": 0}, []runtime.Task{{JobID: "5.t", Node: "n1", Run: 0, ExitStatus: 3}, running("6.t", 0), running("7.t", 0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := overlay(tc.tasks, tc.snap, "n1")
			order := func(a, b runtime.Task) int { return cmp.Or(strings.Compare(a.JobID, b.JobID), a.Run-b.Run) }
			slices.SortFunc(got, order)
			slices.SortFunc(tc.want, order)
			if !slices.Equal(got, tc.want) {
				t.Errorf("overlay = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStartingCounts(t *testing.T) {
	s := newStarting()
	s.begin("1.t", 0)
	s.begin("1.t", 0) // a duplicate order, queued behind the first
	s.begin("2.t", 3)
	s.end("1.t", 0)
	if got := s.snapshot(); got["1.t"] != 0 || got["2.t"] != 3 || len(got) != 2 {
		t.Fatalf("after one of two ends: %v", got)
	}
	s.end("1.t", 0)
	s.end("2.t", 3)
	if got := s.snapshot(); len(got) != 0 {
		t.Fatalf("after every end: %v", got)
	}
}
