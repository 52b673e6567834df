//go:build !unit

package noded_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/testenv"
)

// containerd down: the node stays connected and says it is unhealthy, a
// start fails as the node's fault, the running job is left alone; once
// containerd is back the node says hello again with its containers, and
// jobs start.
func TestContainerdDownAndBack(t *testing.T) {
	d, err := testenv.StartContainerd("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("stop containerd: %v", err)
		}
	})
	e := newEnvOn(t, d.Socket)
	sharqd := e.run(t, "n1")
	p := e.ctl.accept(t)
	if p.hello.Health != "" {
		t.Fatalf("hello of a healthy node: health %q", p.hello.Health)
	}
	p.start(t, e.order(t, "60.t", "touch started; exec sleep 1000\n"))
	p.state(t, "60.t", "running")
	awaitFile(t, e.workFile("60.t", "started"))

	if err := d.Kill(); err != nil {
		t.Fatal(err)
	}
	p.await(t, "an unhealthy heartbeat", func([]api.JobStateMsg, int, bool) bool {
		return strings.Contains(p.health, "container runtime unavailable")
	})
	p.start(t, e.order(t, "61.t", "echo done"))
	p.await(t, "61.t failed as the node's fault", func(states []api.JobStateMsg, _ int, _ bool) bool {
		for _, s := range states {
			if s.JobID == "61.t" && s.State == "failed" {
				return true
			}
		}
		return false
	})
	if f := p.reports("61.t")[0]; !f.NodeFault || !strings.Contains(f.Error, "unavailable") {
		t.Fatalf("start while containerd is down: %+v, want a node fault", f)
	}

	// A new connection meanwhile: the hello says the node cannot list its
	// containers, so the controller keeps what it knows.
	p.conn.Close()
	p1 := e.ctl.accept(t)
	if !p1.hello.Unlisted || !strings.Contains(p1.hello.Health, "unavailable") || len(p1.hello.Running) != 0 {
		t.Fatalf("hello while containerd is down: health %q unlisted %v running %+v", p1.hello.Health, p1.hello.Unlisted, p1.hello.Running)
	}

	if err := d.Restart(context.Background(), testenv.StartTimeout); err != nil {
		t.Fatal(err)
	}
	p2 := e.ctl.accept(t)
	if p2.hello.Health != "" || p2.hello.Unlisted || len(p2.hello.Running) != 1 ||
		p2.hello.Running[0] != (api.RunningJob{JobID: "60.t", Run: 0}) {
		t.Fatalf("hello once containerd is back: health %q unlisted %v running %+v", p2.hello.Health, p2.hello.Unlisted, p2.hello.Running)
	}
	o := e.order(t, "61.t", "echo done")
	o.Run = 1
	p2.start(t, o)
	if x := p2.state(t, "61.t", "exited"); x.ExitStatus != 0 {
		t.Fatalf("job after containerd came back: %+v", x)
	}

	// sharqd restarted while containerd is down: it connects all the same,
	// unhealthy and unable to list, and says hello again once it can.
	sharqd.stop(t)
	if err := d.Kill(); err != nil {
		t.Fatal(err)
	}
	e.run(t, "n1") // its runtime is made as sharqd's: WithLazyDaemon
	p3 := e.ctl.accept(t)
	if !p3.hello.Unlisted || !strings.Contains(p3.hello.Health, "unavailable") {
		t.Fatalf("hello of a sharqd started without containerd: health %q unlisted %v", p3.hello.Health, p3.hello.Unlisted)
	}
	if err := d.Restart(context.Background(), testenv.StartTimeout); err != nil {
		t.Fatal(err)
	}
	p4 := e.ctl.accept(t)
	if p4.hello.Health != "" || p4.hello.Unlisted || !slices.ContainsFunc(p4.hello.Running, func(r api.RunningJob) bool { return r == api.RunningJob{JobID: "60.t"} }) {
		t.Fatalf("hello once containerd is back: health %q unlisted %v running %+v", p4.hello.Health, p4.hello.Unlisted, p4.hello.Running)
	}
	p4.stop(t, "60.t", 0, "deleted")
	p4.state(t, "60.t", "exited")
}

// TestBrokenRuncIsTheNodesFault (F4): a node whose runc cannot create
// containers (here one that says "no cgroup mount found" to every create,
// as a node without its cgroup mount does) reports each start as the
// node's fault, which the controller does not charge to the job and
// counts towards draining the node. The node then tests its runtime with
// a container of its own: no self-test passes while runc is broken, one
// does once it is repaired, and the heartbeats say so.
func TestBrokenRuncIsTheNodesFault(t *testing.T) {
	real, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("runc is needed (make deps installs it): %v", err)
	}
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	broken := filepath.Join(bin, "broken")
	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ -e " + broken + " ]; then for a; do [ \"$a\" = create ] && { echo 'runc create failed: no cgroup mount found in mountinfo' >&2; exit 1; }; done; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "runc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The private containerd, and the shims it starts, find this runc.
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	d, err := testenv.StartContainerd("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("stop containerd: %v", err)
		}
	})
	e := newEnvOn(t, d.Socket)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	p.start(t, e.order(t, "70.t", "echo never"))
	f := p.state(t, "70.t", "failed")
	if !f.NodeFault || !strings.Contains(f.Error, "container runtime cannot start containers") {
		t.Fatalf("start with a broken runc: %+v, want the node's fault", f)
	}
	if _, ok := taskOf(t, e.runtime(t, "n1"), "70.t"); ok {
		t.Error("a container exists for a failed start")
	}
	// Self-tests at 100 ms, 200 ms, 400 ms... all fail while runc does.
	var beats int
	p.await(t, "heartbeats", func(_ []api.JobStateMsg, n int, _ bool) bool { beats = n; return true })
	p.await(t, "8 more heartbeats", func(_ []api.JobStateMsg, n int, _ bool) bool { return n >= beats+8 })
	p.mu.Lock()
	passed := p.selfTests
	p.mu.Unlock()
	if passed != 0 {
		t.Fatalf("a self-test passed with runc broken: %d", passed)
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	p.await(t, "a self-test passed", func([]api.JobStateMsg, int, bool) bool { return p.selfTests == 1 })
	if _, ok := taskOf(t, e.runtime(t, "n1"), "selftest"); ok {
		t.Error("the self-test's container was left behind")
	}
	p.start(t, e.order(t, "71.t", "echo ran"))
	p.state(t, "71.t", "exited")
}
