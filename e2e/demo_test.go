//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/localcluster"
)

// TestMakeDemo runs make demo on its own, as a newcomer does before any
// make up (it starts a cluster in the background and stops it at the
// end), and checks what it narrates from the jobs' own output files: the
// borrower train-b is preempted when nlp takes its GPUs back, saves a
// checkpoint on SIGTERM and resumes from it; the urgent job of their own
// team then preempts train-a (never preempted before), which resumes from
// its checkpoint too. The demo itself waits for each job state it
// narrates and fails when one does not come.
func TestMakeDemo(t *testing.T) {
	repo, err := filepath.Abs("..")
	must(t, err)
	cfg, err := conf.Load(filepath.Join(repo, "contrib", "examples", "local.toml"))
	must(t, err)
	if live := liveMakeUp(); live != "" {
		t.Fatalf("a make up is running (%s): the demo would use it; stop it first", live)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "demo")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH=/usr/local/go/bin:"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Minute
	out, err := cmd.CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(localcluster.DefaultStateDir, "log", "make-up.log"))
		t.Fatalf("make demo: %v\n%s\nmake-up.log:\n%s", err, out, lastLines(string(b), 40))
	}
	text := string(out)
	for _, want := range []string{
		"No local cluster is up; starting one",
		"== 2. Team nlp takes its GPUs back: cross-share preemption ==",
		"== 4. An urgent job of team vision: in-share preemption ==",
		"Stopping the local cluster this demo started",
		"Stopped: daemons ended",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("make demo's output lacks %q:\n%s", want, text)
		}
	}

	u, err := user.Lookup(localcluster.DefaultUser)
	must(t, err)
	work := filepath.Join(u.HomeDir, "demo")
	read := func(name string) string {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(work, name+".o*"))
		if len(files) != 1 {
			t.Fatalf("want one output file of %s in %s, found %q", name, work, files)
		}
		b, err := os.ReadFile(files[0])
		must(t, err)
		return string(b)
	}
	// checkpointed: the job's run saved a checkpoint on SIGTERM and its
	// next run resumed from that step.
	checkpointed := func(name string, run int) {
		t.Helper()
		o := read(name)
		saved := regexp.MustCompile(fmt.Sprintf(`(?m)^run %d: SIGTERM at step (\d+): checkpoint saved, exiting$`, run)).FindStringSubmatch(o)
		resumed := regexp.MustCompile(fmt.Sprintf(`(?m)^run %d: resumed from the checkpoint at step (\d+), on GPUs \d`, run+1)).FindStringSubmatch(o)
		if saved == nil || resumed == nil || saved[1] != resumed[1] || saved[1] == "0" {
			t.Errorf("%s: want run %d to save a checkpoint on SIGTERM and run %d to resume from it:\n%s", name, run, run+1, o)
		}
	}
	// Step 2: nlp takes its lent GPUs back from the borrower train-b.
	checkpointed("train-b", 0)
	// Step 4: urgent preempts train-a in its own share (train-b was
	// preempted once already: the victim order spreads preemptions).
	checkpointed("train-a", 0)
	if b := read("train-b"); strings.Contains(b, "run 2") {
		t.Errorf("train-b ran a third time:\n%s", b)
	}
	for _, name := range []string{"finetune", "urgent"} {
		if o := read(name); !strings.Contains(o, name+": on GPUs ") || !strings.HasSuffix(o, name+": done\n") {
			t.Errorf("%s's output %q: want it to run to the end", name, o)
		}
	}
	// The demo's own cluster is gone, as after make up's ^C.
	if leftovers := localLeftovers(t, cfg); len(leftovers) > 0 {
		t.Errorf("left behind by make demo:\n%s", strings.Join(leftovers, "\n"))
	}
}
