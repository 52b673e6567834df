//go:build !unit

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const openShares = `
[[share]]
name = "a"
partition = "gpu"
gpus = 4
strategy = "LEND"
users = ["*"]

[[share]]
name = "b"
partition = "gpu"
gpus = 4
strategy = "LEND_AND_BORROW"
borrow_limit = -1
in_share_preemption = true
users = ["*"]
`

func TestJobRunsAsSubmitterAndReportsExit(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("ok.sh", "#PBS -N hello\necho uid=$(id -u) gid=$(id -g) job=$PBS_JOBID queue=$PBS_QUEUE wd=$PBS_O_WORKDIR\npwd\n")
	c.script("fail.sh", "echo failing >&2\nexit 3\n")
	ok := c.qsub("-q", "a", "ok.sh")
	fail := c.qsub("-q", "a", "-e", "fail.err", "fail.sh")
	// PBS's -W umask: the job's processes get it, and its output file is
	// made with it (0644); without it, 077 (0600: the owner's alone).
	c.script("umask.sh", "umask\n")
	wide := c.qsub("-q", "a", "-W", "umask=022", "-o", "umask.out", "umask.sh")
	if !strings.HasSuffix(ok, ".e2e") {
		t.Fatalf("qsub printed %q, want only the job id", ok)
	}
	c.waitState(ok, "F", 30*time.Second)
	c.waitState(fail, "F", 30*time.Second)

	seq := strings.TrimSuffix(ok, ".e2e")
	out := filepath.Join(c.workdir, "hello.o"+seq)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("output file: %v", err)
	}
	want := "uid=1000 gid=1000 job=" + ok + " queue=a wd=" + c.workdir + "\n" + c.workdir + "\n"
	if string(b) != want {
		t.Fatalf("output %q, want %q", b, want)
	}
	st, _ := os.Stat(out)
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != alice || st.Mode().Perm() != 0o600 {
		t.Fatalf("output owned by uid %d mode %v, want %d and 0600 (umask 077, PBS's default)", sys.Uid, st.Mode().Perm(), alice)
	}
	c.waitState(wide, "F", 30*time.Second)
	if got := c.readFile("umask.out"); got != "0022\n" {
		t.Fatalf("qsub -W umask=022 job's umask: %q", got)
	}
	if st, err := os.Stat(filepath.Join(c.workdir, "umask.out")); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Fatalf("qsub -W umask=022 job's output file: mode %v, want 0644", st.Mode().Perm())
	}
	if got := c.field(ok, "Exit_status"); got != "0" {
		t.Fatalf("exit status %q, want 0", got)
	}
	if got := c.field(fail, "Exit_status"); got != "3" {
		t.Fatalf("exit status %q, want 3", got)
	}
	if got := c.readFile("fail.err"); got != "failing\n" {
		t.Fatalf("stderr file %q", got)
	}
	// The default qstat hides finished jobs; -x shows them with state F.
	out1, _, _ := c.runAs(alice, "qstat")
	if strings.Contains(out1, seq) {
		t.Fatalf("finished job in plain qstat:\n%s", out1)
	}
	out2, _, _ := c.runAs(alice, "qstat", "-x")
	if !strings.Contains(out2, seq) {
		t.Fatalf("finished job missing from qstat -x:\n%s", out2)
	}
}

func TestPermissions(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares + `
[[share]]
name = "private"
partition = "gpu"
gpus = 0
strategy = "LEND_AND_BORROW"
users = ["bob"]
`})
	c.script("hold.sh", "sleep 30\n")
	id := c.qsub("-q", "a", "-h", "hold.sh")
	cases := []struct {
		name    string
		uid     int
		args    []string
		wantErr string
	}{
		{"other user deletes", bob, []string{"qdel", id}, "qdel: Unauthorized Request"},
		{"unknown job", alice, []string{"qdel", "999999"}, "qdel: Unknown Job Id 999999"},
		{"share not allowed", alice, []string{"qsub", "-q", "private", "--", "true"}, "may not submit"},
		{"root submits", 0, []string{"qsub", "-q", "a", "--", "true"}, "root"},
		{"other user releases", bob, []string{"qrls", id}, "Unauthorized"},
		{"priority above default", alice, []string{"sharqctl", "job", "priority", id, "500"}, "only admins"},
		{"user reconfigures", alice, []string{"sharqctl", "reconfigure"}, "only admins"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, err := c.runAs(tc.uid, tc.args[0], tc.args[1:]...)
			if err == nil || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("err %v stderr %q, want failure containing %q", err, errOut, tc.wantErr)
			}
		})
	}
	if st := c.state(id); st != "H" {
		t.Fatalf("job state %q after refused requests, want H", st)
	}
	// The owner may delete it; qdel prints nothing.
	out, errOut, err := c.runAs(alice, "qdel", id)
	if err != nil || out != "" {
		t.Fatalf("owner qdel: %v %q %q", err, out, errOut)
	}
	c.waitState(id, "F", time.Minute)
}

func TestQdelRunningAndWalltime(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, grace: "2s"})
	c.script("long.sh", "echo started\nsleep 60\n")
	del := c.qsub("-q", "a", "-N", "del", "long.sh")
	wall := c.qsub("-q", "a", "-N", "wall", "-l", "walltime=00:00:02", "long.sh")
	c.waitState(del, "R", time.Minute)
	c.eventually(time.Minute, func() (bool, string) {
		s := c.readFile("del.o" + strings.TrimSuffix(del, ".e2e"))
		return s == "started\n", s
	})
	if _, errOut, err := c.runAs(alice, "qdel", del); err != nil {
		t.Fatalf("qdel: %v %s", err, errOut)
	}
	c.waitState(del, "F", time.Minute)
	if got := c.field(del, "Exit_status"); got != "271" { // 256 + SIGTERM
		t.Fatalf("deleted job exit status %q, want 271", got)
	}
	c.waitState(wall, "F", 30*time.Second)
	if got := c.field(wall, "Exit_status"); got != "271" {
		t.Fatalf("walltime job exit status %q, want 271", got)
	}
	if got := c.field(wall, "comment"); !strings.Contains(got, "walltime") {
		t.Fatalf("walltime job comment %q", got)
	}
}
