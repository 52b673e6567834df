package sched

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzScenario decodes arbitrary scenario text: the parser must never
// panic, and whatever it accepts must run against the core without a panic
// (expectations may fail; the core must stay consistent).
func FuzzScenario(f *testing.F) {
	files, _ := filepath.Glob("testdata/scenarios/*.txt")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("partition p\nnode n part=p gpus=2\nshare s part=p gpus=2 strategy=RESERVE\nup all\nsubmit a share=s gpus=2\nschedule t=1\nexpect start a node=n gpus=0-1\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := parseScenario(text)
		if err != nil {
			return
		}
		for _, st := range sc.steps {
			if j, ok := st.ev.(Submitted); ok && j.Job.Array != nil && len(j.Job.Array.Indices) > 1000 {
				return // keep each input cheap
			}
		}
		_ = runScenario(sc)
	})
}
