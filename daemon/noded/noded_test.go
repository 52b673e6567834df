//go:build !unit

package noded_test

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/runtime"
)

func TestHelloInventoryHeartbeat(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	h := p.hello
	if h.Type != api.MsgHello || h.V != api.NodeVersion || h.Node != "n1" || h.Secret != testSecret {
		t.Errorf("hello %+v", h)
	}
	if h.Error != "" {
		t.Errorf("hello reports problems: %s", h.Error)
	}
	if len(h.Running) != 0 {
		t.Errorf("running %+v on a fresh node", h.Running)
	}
	inv := h.Inventory
	if inv == nil {
		t.Fatal("hello without inventory")
	}
	if inv.Source != "config" || len(inv.GPUs) != 8 || inv.CPUs != goruntime.NumCPU() || inv.MemBytes <= 0 {
		t.Errorf("inventory %+v", inv)
	}
	for i, g := range inv.GPUs {
		if g.Index != i || g.Device != e.gpus[i] {
			t.Errorf("GPU %d: %+v, want index %d device %s", i, g, i, e.gpus[i])
		}
	}
	p.await(t, "two heartbeats", func(_ []api.JobStateMsg, beats int, _ bool) bool { return beats >= 2 })
}

func TestHelloReportsConfigMismatch(t *testing.T) {
	e := newEnv(t)
	e.cfg.Nodes[0].GPUDevices = append(slices.Clone(e.gpus[:7]), filepath.Join(e.dir, "dev", "missing"))
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if !strings.Contains(p.hello.Error, "GPU 7") || !strings.Contains(p.hello.Error, "missing") {
		t.Errorf("hello error %q does not report the missing GPU 7", p.hello.Error)
	}
}

// longScript pads a script with a comment of about 1 MB.
func longScript(body string) string {
	var b strings.Builder
	b.WriteString(body)
	for i := range 20000 {
		fmt.Fprintf(&b, "# padding line %06d of a long job script ............\n", i)
	}
	return b.String()
}

func TestJobRunsAsOwner(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	devList := strings.Join(e.gpus, " ")
	o := e.order(t, "7[4].t", longScript(`set -e
id -u > uid
id -g >> uid
env > env.txt
cat "$PBS_NODEFILE" > nodes.txt
echo saved > "$SHARQ_CHECKPOINT_DIR/ckpt"
for d in `+devList+`; do if [ -e $d ]; then echo $d; fi; done > devs.txt
echo hello to stdout
echo hello to stderr >&2
exit 3
`), 5, 6)
	o.Run = 2
	o.NodeList = []string{"n1", "n2"}
	o.Job.ArrayParent, o.Job.ArrayIndex = "7[].t", 4
	o.Job.Env = map[string]string{"FOO": "bar baz", "PBS_O_HOST": "login1"}
	p.start(t, o)
	run := p.state(t, o.Job.ID, "running")
	ex := p.state(t, o.Job.ID, "exited")
	if run.Run != 2 || ex.Run != 2 || ex.ExitStatus != 3 || ex.Error != "" {
		t.Errorf("reports %+v then %+v, want run 2 exiting 3", run, ex)
	}
	if reps := p.reports(o.Job.ID); len(reps) != 2 || reps[0].State != "running" {
		t.Errorf("reports %+v, want running then exited", reps)
	}

	out := e.workFile(o.Job.ID, "out")
	if got := readFile(t, out); got != "hello to stdout\nhello to stderr\n" {
		t.Errorf("output file holds %q", got)
	}
	for _, f := range []string{out, e.workFile(o.Job.ID, "uid")} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1000 || st.Gid != 1000 {
			t.Errorf("%s owned by %d:%d, want 1000:1000", f, st.Uid, st.Gid)
		}
	}
	if got := readFile(t, e.workFile(o.Job.ID, "uid")); got != "1000\n1000\n" {
		t.Errorf("id -u, id -g in the job: %q", got)
	}
	env := map[string]string{}
	for _, line := range strings.Split(readFile(t, e.workFile(o.Job.ID, "env.txt")), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	ckpt := filepath.Join(e.cfg.Cluster.CheckpointRoot, o.Job.ID)
	want := map[string]string{
		"PBS_JOBID": "7[4].t", "PBS_JOBNAME": "job-7[4].t", "PBS_O_WORKDIR": o.Job.WorkDir, "PBS_QUEUE": "teamA",
		"PBS_ARRAY_INDEX": "4", "PBS_ARRAY_ID": "7[].t", "SHARQ_RESTART_COUNT": "2", "SHARQ_CHECKPOINT_DIR": ckpt,
		"CUDA_VISIBLE_DEVICES": "5,6", "NVIDIA_VISIBLE_DEVICES": "5,6", "SHARQ_GPUS": "5,6",
		"FOO": "bar baz", "PBS_O_HOST": "login1", "USER": "alice", "LOGNAME": "alice", "HOME": o.Job.WorkDir,
	}
	if u, err := user.LookupId(strconv.Itoa(int(o.Job.Owner.UID))); err == nil { // the node knows the user's home
		want["HOME"] = u.HomeDir
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("job saw %s=%q, want %q", k, env[k], v)
		}
	}
	if got := readFile(t, e.workFile(o.Job.ID, "nodes.txt")); got != "n1\nn2\n" {
		t.Errorf("PBS_NODEFILE holds %q", got)
	}
	if got := readFile(t, filepath.Join(ckpt, "ckpt")); got != "saved\n" {
		t.Errorf("checkpoint file holds %q", got)
	}
	if got := readFile(t, e.workFile(o.Job.ID, "devs.txt")); got != e.gpus[5]+"\n"+e.gpus[6]+"\n" {
		t.Errorf("GPU device nodes in the job:\n%s", got)
	}

	rt := e.runtime(t, "n1")
	if task, ok := taskOf(t, rt, o.Job.ID); !ok || task.Running || task.ExitStatus != 3 {
		t.Fatalf("after the exit report the container is %+v (found %v), want kept exited with 3", task, ok)
	}
	p.remove(t, o.Job.ID)
	awaitGone(t, rt, o.Job.ID)
	// The node directory goes right after the container.
	jobDir := filepath.Join(e.stateDir("n1"), "jobs", o.Job.ID)
	deadline := time.Now().Add(waitLimit)
	for _, err := os.Stat(jobDir); !errors.Is(err, os.ErrNotExist); _, err = os.Stat(jobDir) {
		if time.Now().After(deadline) {
			t.Fatalf("the job's node directory outlived its removal: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(ckpt); err != nil {
		t.Errorf("the checkpoint directory must outlive the container: %v", err)
	}
}

// TestScriptInterpreter runs scripts in real containers with the
// interpreter their #! line (or qsub -S) names, as PBS does: an awk
// program would be a syntax error for /bin/sh.
func TestScriptInterpreter(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	tests := []struct {
		id, script, shell, want string
	}{
		{"31.t", "#!/bin/awk -f\nBEGIN { print \"awk ran me\" }\n", "", "awk ran me\n"},
		{"32.t", "#!/bin/sh\necho not me\n", "/bin/cat", "#!/bin/sh\necho not me\n"}, // -S wins over #!
		{"33.t", "echo sh ran me\n", "", "sh ran me\n"},
	}
	for _, tt := range tests {
		o := e.order(t, tt.id, tt.script)
		o.Job.Shell = tt.shell
		p.start(t, o)
	}
	for _, tt := range tests {
		ex := p.state(t, tt.id, "exited")
		if ex.ExitStatus != 0 || ex.Error != "" {
			t.Errorf("%s: exit %+v", tt.id, ex)
		}
		if got := readFile(t, e.workFile(tt.id, "out")); got != tt.want {
			t.Errorf("%s: output %q, want %q", tt.id, got, tt.want)
		}
	}
}

// awaitGone waits until the runtime no longer lists the job.
func awaitGone(t *testing.T, rt runtime.Runtime, id string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if _, ok := taskOf(t, rt, id); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("container of %s not removed", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFailedStart(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	cases := []struct {
		name, id string
		edit     func(*api.StartOrder)
		wantErr  string
		refusal  api.StartRefusal // a path refusal fails the job at once
	}{
		{name: "image absent", id: "40.t", edit: func(o *api.StartOrder) { o.Image = "no.such/image:1" }, wantErr: "no.such/image"},
		{name: "GPU not on the node", id: "41.t", edit: func(o *api.StartOrder) { o.GPUs = []int{9} }, wantErr: "GPU 9"},
		{name: "nothing to run", id: "42.t", edit: func(o *api.StartOrder) { o.Job.Script = "" }, wantErr: "neither script nor command"},
		{name: "work directory on /proc", id: "43.t", edit: func(o *api.StartOrder) { o.Job.WorkDir = "/proc" }, wantErr: "work directory refused: /proc as 1000:1000: on proc", refusal: api.StartRefusedPath},
		{name: "work directory in another user's home", id: "44.t", edit: func(o *api.StartOrder) {
			home := filepath.Join(e.dir, "home-2000")
			if err := os.MkdirAll(filepath.Join(home, "pub"), 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(home, "pub"), 0o777)
			os.Chown(home, 2000, 2000)
			os.Chmod(home, 0o700)
			o.Job.WorkDir = filepath.Join(home, "pub")
		}, wantErr: "permission denied", refusal: api.StartRefusedPath},
		{name: "output in a directory the user may not write", id: "45.t", edit: func(o *api.StartOrder) {
			dir := filepath.Join(e.dir, "root-only")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			o.Job.Stdout = filepath.Join(dir, "out")
		}, wantErr: "cannot create job output file", refusal: api.StartRefusedPath},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := e.order(t, c.id, "exit 0")
			c.edit(&o)
			p.start(t, o)
			f := p.state(t, c.id, "failed")
			if !strings.Contains(f.Error, c.wantErr) {
				t.Errorf("failure %q does not say %q", f.Error, c.wantErr)
			}
			if f.Refusal != c.refusal {
				t.Errorf("refusal %q, want %q", f.Refusal, c.refusal)
			}
			if f.NodeFault {
				// It would drain the node (runtime.ErrRuntime).
				t.Errorf("the job's own failure %q reported as the node's fault", f.Error)
			}
			if _, ok := taskOf(t, e.runtime(t, "n1"), c.id); ok {
				t.Error("a container exists for a failed start")
			}
		})
	}
}

func TestGPUIsolation(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	probe := `for i in 0 1 2 3 4 5 6 7; do
  d=` + filepath.Join(e.dir, "dev") + `/nvidia$i
  if [ -e $d ]; then echo "$i $( (: < $d) 2>&1 | sed 's/.*: //')"; fi
done > devs.txt
echo "$CUDA_VISIBLE_DEVICES" > cuda.txt
`
	jobs := map[string][]int{"50.t": {0, 1}, "51.t": {2, 3}}
	for id, gpus := range jobs {
		p.start(t, e.order(t, id, probe, gpus...))
	}
	for id, gpus := range jobs {
		if ex := p.state(t, id, "exited"); ex.ExitStatus != 0 {
			t.Errorf("%s exited %d", id, ex.ExitStatus)
		}
		var want strings.Builder
		for _, g := range gpus {
			// The device cgroup lets the open reach the kernel, which has no
			// driver for the fake major: ENXIO. A denied open gives EPERM.
			fmt.Fprintf(&want, "%d No such device or address\n", g)
		}
		if got := readFile(t, e.workFile(id, "devs.txt")); got != want.String() {
			t.Errorf("%s sees devices:\n%s\nwant:\n%s", id, got, want.String())
		}
		if got := readFile(t, e.workFile(id, "cuda.txt")); got != fmt.Sprintf("%d,%d\n", gpus[0], gpus[1]) {
			t.Errorf("%s: CUDA_VISIBLE_DEVICES %q", id, got)
		}
	}
}

func TestStopWithGrace(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	trapper := e.order(t, "60.t", `trap 'echo saved > "$SHARQ_CHECKPOINT_DIR/ckpt"; exit 0' TERM
touch ready
while :; do sleep 0.1; done
`)
	ignorer := e.order(t, "61.t", `trap '' TERM
touch ready
while :; do sleep 0.1; done
`)
	for _, o := range []api.StartOrder{trapper, ignorer} {
		p.start(t, o)
		p.state(t, o.Job.ID, "running")
		awaitFile(t, e.workFile(o.Job.ID, "ready"))
	}
	p.stop(t, trapper.Job.ID, time.Minute, "preempted")
	p.stop(t, ignorer.Job.ID, time.Second, "deleted")
	if ex := p.state(t, trapper.Job.ID, "exited"); ex.ExitStatus != 0 || ex.Error != "" {
		t.Errorf("TERM-trapping job: %+v, want exit 0", ex)
	}
	if got := readFile(t, filepath.Join(e.cfg.Cluster.CheckpointRoot, trapper.Job.ID, "ckpt")); got != "saved\n" {
		t.Errorf("checkpoint written on TERM: %q", got)
	}
	if ex := p.state(t, ignorer.Job.ID, "exited"); ex.ExitStatus != 256+9 || ex.Error != "" {
		t.Errorf("TERM-ignoring job: %+v, want 265", ex)
	}
	// A stop for a job that has exited repeats its exit.
	p.stop(t, ignorer.Job.ID, time.Second, "deleted")
	p.await(t, "the exit reported again", func(states []api.JobStateMsg, _ int, _ bool) bool {
		n := 0
		for _, s := range states {
			if s.JobID == ignorer.Job.ID && s.State == "exited" && s.ExitStatus == 265 {
				n++
			}
		}
		return n == 2
	})
}

func TestWalltime(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	o := e.order(t, "70.t", "touch ready\nsleep 1000\n")
	o.Walltime, o.Grace = time.Second, 5*time.Second
	p.start(t, o)
	ex := p.state(t, o.Job.ID, "exited")
	if ex.Error != "walltime exceeded" || ex.ExitStatus != 256+15 {
		t.Errorf("exit %+v, want 271 with walltime exceeded", ex)
	}
}

func TestRestartReadopts(t *testing.T) {
	e := newEnv(t)
	c1 := e.spawn(t, "n1")
	p1 := e.ctl.accept(t)
	o := e.order(t, "80.t", `echo start >> starts
while [ ! -e go ]; do sleep 0.1; done
exit 7
`)
	p1.start(t, o)
	p1.state(t, o.Job.ID, "running")
	awaitFile(t, e.workFile(o.Job.ID, "starts"))

	c1.signal(syscall.SIGKILL)
	c1.wait(t)
	rt := e.runtime(t, "n1")
	if task, ok := taskOf(t, rt, o.Job.ID); !ok || !task.Running {
		t.Fatalf("after kill -9 of sharqd the container is %+v (found %v), want running", task, ok)
	}

	c2 := e.spawn(t, "n1")
	p2 := e.ctl.accept(t)
	if !slices.Contains(p2.hello.Running, api.RunningJob{JobID: o.Job.ID, Run: 0}) {
		t.Errorf("hello after the restart lists %+v, want %s running", p2.hello.Running, o.Job.ID)
	}
	p2.start(t, o) // a duplicate order: reported, not run again
	if r := p2.state(t, o.Job.ID, "running"); r.Run != 0 {
		t.Errorf("duplicate start answered %+v", r)
	}
	if err := os.WriteFile(e.workFile(o.Job.ID, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ex := p2.state(t, o.Job.ID, "exited"); ex.ExitStatus != 7 {
		t.Errorf("exit %+v, want 7", ex)
	}
	p2.remove(t, o.Job.ID)
	awaitGone(t, rt, o.Job.ID)

	c2.signal(syscall.SIGTERM)
	if code := c2.wait(t); code != 0 {
		t.Errorf("sharqd exited %d on SIGTERM", code)
	}
	p2.await(t, "the connection closed", func(_ []api.JobStateMsg, _ int, closed bool) bool { return closed })
	var exits, runs int
	for _, s := range p2.reports(o.Job.ID) {
		switch s.State {
		case "exited":
			exits++
		case "running":
			runs++
		}
	}
	if exits != 1 || runs != 1 {
		t.Errorf("after the restart: %d exit and %d running reports, want 1 and 1: %+v", exits, runs, p2.reports(o.Job.ID))
	}
	if got := readFile(t, e.workFile(o.Job.ID, "starts")); got != "start\n" {
		t.Errorf("the job started %d times", strings.Count(got, "start"))
	}
}

// TestRestartResumesStopAndWalltime: a stop in its grace and a walltime
// still to come when sharqd is killed (-9) are carried out by the next
// sharqd. The first one is frozen (SIGSTOP) before either is due and
// killed only after both are, so none of its timers can have done it: at
// the restart both containers still run, and the new daemon SIGKILLs the
// one past its grace and stops the one past its walltime.
func TestRestartResumesStopAndWalltime(t *testing.T) {
	e := newEnv(t)
	c1 := e.spawn(t, "n1")
	p1 := e.ctl.accept(t)
	stopped := e.order(t, "90.t", `trap '' TERM
touch ready
while :; do sleep 0.1; done
`)
	timed := e.order(t, "91.t", "touch ready\nsleep 1000\n")
	const wall, grace = 4 * time.Second, 2 * time.Second
	timed.Walltime = wall
	started := map[string]time.Time{}
	for _, o := range []api.StartOrder{stopped, timed} {
		p1.start(t, o)
		started[o.Job.ID] = p1.state(t, o.Job.ID, "running").Time
		awaitFile(t, e.workFile(o.Job.ID, "ready"))
	}
	p1.stop(t, stopped.Job.ID, grace, "preempted")
	record := func(id string) string {
		return readFile(t, filepath.Join(e.stateDir("n1"), "jobs", id, "state.json"))
	}
	deadline := time.Now().Add(waitLimit)
	for !strings.Contains(record(stopped.Job.ID), `"stop_reason":"preempted"`) {
		if time.Now().After(deadline) {
			t.Fatal("the stop was never recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	graceEnd := time.Now().Add(grace) // the stop was recorded before now
	// Frozen, the daemon's SIGKILL after the grace and its walltime timer
	// cannot fire; they die with it.
	c1.signal(syscall.SIGSTOP)
	if r := record(timed.Job.ID); strings.Contains(r, "stop_reason") {
		t.Fatalf("the walltime (%v) passed before the daemon was frozen, which proves nothing: %s", wall, r)
	}
	for _, id := range []string{stopped.Job.ID, timed.Job.ID} {
		for _, r := range p1.reports(id) {
			if r.State != "running" {
				t.Fatalf("%s: the first daemon reported %+v before it was frozen", id, r)
			}
		}
	}
	// Real time, not a fake clock: the frozen daemon is another process on
	// the kernel's clock, and the next one must find both instants past.
	// No condition says so sooner; the wait ends at the later instant.
	time.Sleep(time.Until(latest(graceEnd, started[timed.Job.ID].Add(wall)).Add(100 * time.Millisecond)))
	c1.signal(syscall.SIGKILL)
	c1.wait(t)
	rt := e.runtime(t, "n1")
	for _, id := range []string{stopped.Job.ID, timed.Job.ID} {
		if task, ok := taskOf(t, rt, id); !ok || !task.Running {
			t.Fatalf("%s after kill -9 of the frozen sharqd: %+v (found %v), want running", id, task, ok)
		}
	}

	e.spawn(t, "n1")
	p2 := e.ctl.accept(t)
	if ex := p2.exit(t, stopped.Job.ID); ex.ExitStatus != 256+9 {
		t.Errorf("stopped job: %+v, want 265 after the re-issued stop", ex)
	}
	if ex := p2.exit(t, timed.Job.ID); ex.ExitStatus != 256+15 || ex.Error != "walltime exceeded" {
		t.Errorf("timed job: %+v, want 271 with walltime exceeded", ex)
	}
}

// exit is the job's exit as the node reported it on this connection: in
// its hello (the job ended before the daemon said hello) or after.
func (p *peer) exit(t *testing.T, id string) api.JobStateMsg {
	t.Helper()
	for _, r := range p.hello.Running {
		if r.JobID == id && r.Exited {
			return api.JobStateMsg{JobID: id, Run: r.Run, State: "exited", ExitStatus: r.ExitStatus, Error: r.Error}
		}
	}
	return p.state(t, id, "exited")
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestExitWhileDisconnected(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p1 := e.ctl.accept(t)
	o := e.order(t, "100.t", "while [ ! -e go ]; do sleep 0.1; done\nexit 5\n")
	p1.start(t, o)
	p1.state(t, o.Job.ID, "running")

	e.ctl.refuse("node n1 is already connected") // the node must retry
	p1.conn.Close()
	os.WriteFile(e.workFile(o.Job.ID, "go"), nil, 0o644)
	rt := e.runtime(t, "n1")
	deadline := time.Now().Add(waitLimit)
	for {
		if task, ok := taskOf(t, rt, o.Job.ID); ok && !task.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job never exited")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.ctl.awaitRefusals(t, 2)
	e.ctl.refuse("")
	p2 := e.ctl.accept(t)
	if !slices.Contains(p2.hello.Running, api.RunningJob{JobID: o.Job.ID, Exited: true, ExitStatus: 5}) {
		t.Errorf("hello lists %+v, want %s exited 5", p2.hello.Running, o.Job.ID)
	}
	p2.remove(t, o.Job.ID)
	awaitGone(t, rt, o.Job.ID)
}

func TestSeveralNodesOneContainerd(t *testing.T) {
	e := newEnv(t, "n1", "n2")
	e.run(t, "n1")
	e.run(t, "n2")
	peers := map[string]*peer{}
	for range 2 {
		p := e.ctl.accept(t)
		peers[p.hello.Node] = p
	}
	o := e.order(t, "110.t", "cat $PBS_NODEFILE > nodes-$SHARQ_NODE.txt\n", 0)
	o.NodeList = []string{"n1", "n2"}
	for _, n := range []string{"n1", "n2"} {
		peers[n].start(t, o)
	}
	for _, n := range []string{"n1", "n2"} {
		if ex := peers[n].state(t, o.Job.ID, "exited"); ex.ExitStatus != 0 {
			t.Errorf("%s: %+v", n, ex)
		}
		if got := readFile(t, e.workFile(o.Job.ID, "nodes-"+n+".txt")); got != "n1\nn2\n" {
			t.Errorf("%s: PBS_NODEFILE holds %q", n, got)
		}
		task, ok := taskOf(t, e.runtime(t, n), o.Job.ID)
		if !ok || task.Node != n {
			t.Errorf("%s lists %+v (found %v)", n, task, ok)
		}
	}
	peers["n1"].remove(t, o.Job.ID)
	awaitGone(t, e.runtime(t, "n1"), o.Job.ID)
	if _, ok := taskOf(t, e.runtime(t, "n2"), o.Job.ID); !ok {
		t.Error("removing n1's container removed n2's")
	}
}

func TestRefusals(t *testing.T) {
	t.Run("bad secret is fatal", func(t *testing.T) {
		e := newEnv(t)
		os.WriteFile(e.cfg.Cluster.SecretFile, []byte("wrong\n"), 0o600)
		d := e.run(t, "n1")
		if err := d.result(t); !errors.Is(err, noded.ErrBadSecret) {
			t.Fatalf("Run = %v, want ErrBadSecret", err)
		}
	})
	t.Run("a certificate that does not name the node is fatal", func(t *testing.T) {
		e := newEnv(t)
		e.ctl.refuseWith(api.RefusedCert, `the node's certificate names [n2], not node "n1"`)
		d := e.run(t, "n1")
		if err := d.result(t); !errors.Is(err, noded.ErrBadCert) || !strings.Contains(err.Error(), "names [n2]") {
			t.Fatalf("Run = %v, want ErrBadCert with the controller's words", err)
		}
	})
	t.Run("the code decides, not the words", func(t *testing.T) {
		// A refusal whose text says "secret" and "authentication" but
		// whose code is not bad_secret: the node retries (before the
		// codes it matched the words and gave up for good).
		e := newEnv(t)
		e.ctl.refuse("node n1: secret store authentication busy, try again")
		e.run(t, "n1")
		e.ctl.awaitRefusals(t, 2)
		e.ctl.refuse("")
		e.ctl.accept(t)
	})
	t.Run("secret file readable by others", func(t *testing.T) {
		e := newEnv(t)
		os.Chmod(e.cfg.Cluster.SecretFile, 0o644)
		d := e.run(t, "n1")
		if err := d.result(t); !errors.Is(err, secret.ErrFile) {
			t.Fatalf("Run = %v, want secret.ErrFile", err)
		}
		if n := e.ctl.connections(); n != 0 {
			t.Errorf("%d connections made with an unsafe secret file", n)
		}
	})
	t.Run("unknown node", func(t *testing.T) {
		e := newEnv(t)
		if err := e.run(t, "n9").result(t); !errors.Is(err, noded.ErrUnknownNode) {
			t.Fatalf("Run = %v, want ErrUnknownNode", err)
		}
	})
	t.Run("second daemon for a node", func(t *testing.T) {
		e := newEnv(t)
		e.run(t, "n1")
		e.ctl.accept(t)
		if err := e.run(t, "n1").result(t); !errors.Is(err, noded.ErrLocked) {
			t.Fatalf("Run = %v, want ErrLocked", err)
		}
	})
}

// The hello lists configured mounts the node lacks, and what the node
// sees of its checkpoint root; a job gets the mounts it has.
func TestHelloMountsAndCheckpointRoot(t *testing.T) {
	e := newEnv(t)
	have := filepath.Join(e.dir, "datasets")
	if err := os.MkdirAll(have, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(have, "f"), []byte("data\n"), 0o644)
	gone := filepath.Join(e.dir, "scratch")
	e.cfg.Cluster.Mounts = []conf.Mount{{Path: have, ReadOnly: true}}
	e.cfg.Partitions = []conf.Partition{{Name: "p", Mounts: []conf.Mount{{Path: gone}}}}
	e.run(t, "n1")
	p := e.ctl.accept(t)
	inv := p.hello.Inventory
	if len(inv.Missing) != 1 || !strings.Contains(inv.Missing[0], "mount "+gone) {
		t.Errorf("missing %q, want %s", inv.Missing, gone)
	}
	ck := inv.Checkpoint
	if ck == nil || ck.Root != e.cfg.Cluster.CheckpointRoot || ck.Marker == "" || ck.Type == "" || ck.Error != "" {
		t.Errorf("checkpoint root %+v", ck)
	}
	// With the missing one made, a job reads the read-only mount.
	if err := os.MkdirAll(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	o := e.order(t, "1.t", "cat "+have+"/f > $PBS_O_WORKDIR/out.txt; touch "+have+"/x 2>/dev/null || echo ro >> $PBS_O_WORKDIR/out.txt")
	p.start(t, o)
	if st := p.state(t, o.Job.ID, "exited"); st.ExitStatus != 0 {
		t.Fatalf("exit %+v", st)
	}
	if got := readFile(t, e.workFile(o.Job.ID, "out.txt")); got != "data\nro\n" {
		t.Errorf("job output %q", got)
	}
}

// TestHostImageJobFiles: a job on the host's own root passes no directory
// of sharqd's state (0700, root) to reach its script and node file: it sees
// them in its own /run, and cannot see another job's.
func TestHostImageJobFiles(t *testing.T) {
	e := newEnv(t)
	e.cfg.Partitions = []conf.Partition{{Name: "p", HostImage: true}}
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if fi, err := os.Stat(e.stateDir("n1")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v, want mode 0700", fi.Mode(), err)
	}
	o := e.order(t, "1.t", `echo "script $0"; cat "$PBS_NODEFILE"; ls `+e.stateDir("n1")+` 2>/dev/null || echo state-hidden`)
	o.Image = runtime.HostImage
	p.start(t, o)
	if st := p.state(t, o.Job.ID, "exited"); st.ExitStatus != 0 {
		t.Fatalf("exit %+v", st)
	}
	if got, want := readFile(t, e.workFile(o.Job.ID, "out")), "script /run/sharq/job/script\nn1\nstate-hidden\n"; got != want {
		t.Errorf("job output %q, want %q", got, want)
	}
}
