package noded

import (
	"slices"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime"
)

func TestOutboxSupersede(t *testing.T) {
	msg := func(id string, run int, state api.RunState, status int, errText string) api.JobStateMsg {
		return api.JobStateMsg{JobID: id, Run: run, State: state, ExitStatus: status, Error: errText}
	}
	cases := []struct {
		name  string
		queue []api.JobStateMsg
		tasks []runtime.Task
		keep  []int // indices of queue kept
	}{
		{
			name:  "running of a listed run dropped",
			queue: []api.JobStateMsg{msg("1.c", 0, stateRunning, 0, "")},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, Running: true}},
		},
		{
			name:  "running of another run kept",
			queue: []api.JobStateMsg{msg("1.c", 1, stateRunning, 0, "")},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, Running: true}},
			keep:  []int{0},
		},
		{
			name:  "plain exit the hello carries dropped",
			queue: []api.JobStateMsg{msg("1.c", 0, stateRunning, 0, ""), msg("1.c", 0, stateExited, 3, "")},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, ExitStatus: 3}},
		},
		{
			name:  "exit with an error kept",
			queue: []api.JobStateMsg{msg("1.c", 0, stateExited, 271, errWalltime)},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, ExitStatus: 271}},
			keep:  []int{0},
		},
		{
			name:  "exit after the listing kept",
			queue: []api.JobStateMsg{msg("1.c", 0, stateExited, 0, "")},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, Running: true}},
			keep:  []int{0},
		},
		{
			name:  "failure to start kept",
			queue: []api.JobStateMsg{msg("2.c", 0, stateFailed, -1, "no image"), msg("1.c", 0, stateRunning, 0, "")},
			tasks: []runtime.Task{{JobID: "1.c", Run: 0, Running: true}},
			keep:  []int{0},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newOutbox()
			for _, m := range c.queue {
				o.push(m)
			}
			o.supersede(c.tasks)
			var want []api.JobStateMsg
			for _, i := range c.keep {
				want = append(want, c.queue[i])
			}
			var got []api.JobStateMsg
			for {
				m, ok := o.peek()
				if !ok {
					break
				}
				got = append(got, m)
				o.pop()
			}
			if !slices.Equal(got, want) {
				t.Errorf("kept %+v, want %+v", got, want)
			}
		})
	}
}
