//go:build !unit

package containerd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
	"github.com/sharq-hpc/sharq/runtime/runtimetest"
)

// jobDir makes a directory owned by uid:gid (mode 0755).
func jobDir(t *testing.T, uid, gid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sharq-job-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// userSpec is a job of uid 1000 running script, output joined in dir.
func userSpec(node, dir, name, script string) runtime.Spec {
	return runtime.Spec{
		JobID: runtimetest.JobID(name), Node: node, Image: image,
		UID: 1000, GID: 1000,
		Args:    []string{"/bin/sh", "-c", script},
		WorkDir: dir,
		Stdout:  filepath.Join(dir, name+".out"), Stderr: filepath.Join(dir, name+".out"),
	}
}

// runJob starts s, waits for it, removes it and returns status and output.
func runJob(t *testing.T, rt runtime.Runtime, s runtime.Spec) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Start(ctx, s); err != nil {
		t.Fatalf("start %s: %v", s.JobID, err)
	}
	code, err := rt.Wait(ctx, s.JobID)
	if err != nil {
		t.Fatalf("wait %s: %v", s.JobID, err)
	}
	if err := rt.Remove(ctx, s.JobID); err != nil {
		t.Fatalf("remove %s: %v", s.JobID, err)
	}
	out, err := os.ReadFile(s.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

func closeRuntime(t *testing.T, rt runtime.Runtime) {
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

func TestJobUserGroupsPrivileges(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "users")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	s := userSpec("users", dir, "ids", `id -u; id -g; id -G; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; umask`)
	s.Groups = []uint32{2000, 1000, 3000}
	code, out := runJob(t, rt, s)
	want := "1000\n1000\n1000 2000 3000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n0077\n"
	if code != 0 || out != want {
		t.Errorf("uid 1000 job: status %d, output %q, want 0, %q", code, out, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(s.Stdout, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 1000 || st.Gid != 1000 || st.Mode&0o7777 != 0o600 {
		t.Errorf("output file: owner %d:%d mode %o, want 1000:1000 600 (PBS's default umask 077)", st.Uid, st.Gid, st.Mode&0o7777)
	}
	// A job that asks for umask 022 (qsub -W umask=022) runs with it, and
	// its output file is 0644.
	s = userSpec("users", dir, "umask022", `umask`)
	umask := uint32(0o022)
	s.Umask = &umask
	if code, out := runJob(t, rt, s); code != 0 || out != "0022\n" {
		t.Errorf("umask 022 job: status %d, output %q, want 0, \"0022\\n\"", code, out)
	}
	if err := unix.Stat(s.Stdout, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0o644 {
		t.Errorf("umask 022 job's output file: mode %o, want 644", st.Mode&0o7777)
	}

	// Root keeps containerd's default capabilities, never all of them.
	rs := userSpec("users", dir, "root", `id -u; grep '^CapEff' /proc/self/status`)
	rs.UID, rs.GID = 0, 0
	code, out = runJob(t, rt, rs)
	var capEff uint64
	if _, err := fmt.Sscanf(strings.SplitN(out, "\n", 2)[1], "CapEff:\t%x", &capEff); code != 0 || err != nil {
		t.Fatalf("root job: status %d, output %q (%v)", code, out, err)
	}
	if capEff == 0 || capEff&(1<<unix.CAP_SYS_ADMIN) != 0 || capEff&(1<<unix.CAP_MKNOD) == 0 {
		t.Errorf("root job CapEff %#x: want defaults (MKNOD, not SYS_ADMIN)", capEff)
	}
}

func TestOutputCreatedAsUser(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "outputs")
	closeRuntime(t, rt)
	rootDir := jobDir(t, 0, 0) // 0755 root: uid 1000 cannot create files here
	userDir := jobDir(t, 1000, 1000)
	rootFile := filepath.Join(userDir, "root-owned")
	if err := os.WriteFile(rootFile, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, stdout string }{
		{"directory not writable by the user", filepath.Join(rootDir, "out")},
		{"existing file of another user", rootFile},
		{"missing directory", filepath.Join(userDir, "no", "out")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := userSpec("outputs", userDir, "denied", "echo hi")
			s.Stdout, s.Stderr = tc.stdout, tc.stdout
			err := rt.Start(context.Background(), s)
			if !errors.Is(err, runtime.ErrOutput) {
				t.Fatalf("Start: %v, want ErrOutput", err)
			}
			if _, err := rt.Wait(context.Background(), s.JobID); !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("after refused Start: Wait %v, want ErrNotFound", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(rootDir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output created in a directory the user cannot write: %v", err)
	}
	if data, _ := os.ReadFile(rootFile); string(data) != "secret\n" {
		t.Errorf("root's file changed: %q", data)
	}
}

func TestEnvWorkDirMounts(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "env")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	data := jobDir(t, 0, 0)
	if err := os.WriteFile(filepath.Join(data, "in"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := userSpec("env", dir, "env", `echo "$FOO"; echo "$PATH"; pwd; touch made-here; cat /data/in; touch /data/x 2>/dev/null || echo read-only`)
	s.Env = []string{"FOO=bar  baz"}
	s.Mounts = []runtime.Mount{{Source: data, Dest: "/data", ReadOnly: true}}
	code, out := runJob(t, rt, s)
	want := "bar  baz\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n" + dir + "\ninput\nread-only\n"
	if code != 0 || out != want {
		t.Errorf("status %d, output %q, want 0, %q", code, out, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, "made-here"), &st); err != nil || st.Uid != 1000 {
		t.Errorf("file made in the work dir: %v, owner %d, want 1000", err, st.Uid)
	}
}

func TestGPUPinning(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "gpus")
	closeRuntime(t, rt)
	gpuDir, err := os.MkdirTemp("", "sharq-gpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(gpuDir) })
	if err := os.Chmod(gpuDir, 0o755); err != nil {
		t.Fatal(err)
	}
	gpus, err := testenv.MakeFakeGPUs(gpuDir, 8)
	if err != nil {
		t.Fatal(err)
	}
	major, err := testenv.FakeGPUMajor()
	if err != nil {
		t.Fatal(err)
	}
	dir := jobDir(t, 1000, 1000)
	// Each job lists the device nodes it got, then tries all eight GPUs
	// through a bind mount of the host directory (the cgroup decides), then
	// its own nodes.
	script := fmt.Sprintf(`ls %[1]s | tr '\n' ' '; echo
for i in 0 1 2 3 4 5 6 7; do
  cat /hostgpus/nvidia$i 2>/tmp/err; echo "host$i: $(sed 's/.*: //' /tmp/err)"
done
for f in %[1]s/*; do cat $f 2>/tmp/err; echo "own ${f##*/}: $(sed 's/.*: //' /tmp/err)"; done`, gpuDir)
	type job struct {
		spec runtime.Spec
		own  []int
	}
	var jobs []job
	for n, own := range [][]int{{0, 1}, {2, 3}} {
		s := userSpec("gpus", dir, fmt.Sprintf("gpujob%d", n), script)
		for _, i := range own {
			s.Devices = append(s.Devices, gpus[i])
		}
		s.Mounts = []runtime.Mount{{Source: gpuDir, Dest: "/hostgpus", ReadOnly: true}}
		jobs = append(jobs, job{s, own})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, j := range jobs { // both run at once
		if err := rt.Start(ctx, j.spec); err != nil {
			t.Fatal(err)
		}
	}
	const allowed, denied = "No such device or address", "Operation not permitted"
	for _, j := range jobs {
		if code, err := rt.Wait(ctx, j.spec.JobID); code != 0 || err != nil {
			t.Fatalf("%s: status %d, %v", j.spec.JobID, code, err)
		}
		out, err := os.ReadFile(j.spec.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		var want []string
		var names []string
		for _, i := range j.own {
			names = append(names, fmt.Sprintf("nvidia%d", i))
		}
		want = append(want, strings.Join(names, " ")+" ")
		for i := range 8 {
			res := denied
			if slices.Contains(j.own, i) {
				res = allowed
			}
			want = append(want, fmt.Sprintf("host%d: %s", i, res))
		}
		for _, name := range names {
			want = append(want, fmt.Sprintf("own %s: %s", name, allowed))
		}
		if !slices.Equal(lines, want) {
			t.Errorf("job with GPUs %v (fake major %d):\n got %q\nwant %q", j.own, major, lines, want)
		}
	}

	// A root job may mknod, but the device cgroup still refuses GPUs that
	// are not its own.
	rs := userSpec("gpus", dir, "mknod", fmt.Sprintf(`mknod /tmp/g4 c %[1]d 4 && mknod /tmp/g5 c %[1]d 5 || exit 1
cat /tmp/g4 2>/tmp/err; echo "g4: $(sed 's/.*: //' /tmp/err)"
cat /tmp/g5 2>/tmp/err; echo "g5: $(sed 's/.*: //' /tmp/err)"`, major))
	rs.UID, rs.GID = 0, 0
	rs.Devices = []string{gpus[4]}
	code, out := runJob(t, rt, rs)
	if want := "g4: " + allowed + "\ng5: " + denied + "\n"; code != 0 || out != want {
		t.Errorf("root job with GPU 4: status %d, output %q, want 0, %q", code, out, want)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "limits")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	s := userSpec("limits", dir, "limits", `
cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max
df -k /dev/shm | awk 'NR==2 {print $2}'
echo ready; exec sleep 1000`)
	s.CPUs = 2
	s.Memory = 256 << 20
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Start(ctx, s); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	nctx := namespaces.WithNamespace(ctx, namespace)
	ctr, err := cl.LoadContainer(nctx, runtime.ContainerID("limits", s.JobID))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ctr.Spec(nctx)
	if err != nil {
		t.Fatal(err)
	}
	res := spec.Linux.Resources
	if res.CPU == nil || res.CPU.Quota == nil || *res.CPU.Quota != 200000 || res.CPU.Period == nil || *res.CPU.Period != 100000 {
		t.Errorf("spec CPU = %+v, want quota 200000 period 100000", res.CPU)
	}
	if res.Memory == nil || res.Memory.Limit == nil || *res.Memory.Limit != 256<<20 {
		t.Errorf("spec memory = %+v, want limit %d", res.Memory, 256<<20)
	}
	deadline := time.Now().Add(30 * time.Second)
	var out []byte
	for !strings.Contains(string(out), "ready") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		out, _ = os.ReadFile(s.Stdout)
	}
	// cgroup v1: quota, period, bytes; v2: "quota period", bytes.
	got := strings.Fields(string(out))
	want := []string{"200000", "100000", fmt.Sprint(256 << 20), fmt.Sprint(128 << 10), "ready"}
	if !slices.Equal(got, want) {
		t.Errorf("inside the container: %q, want %q (cpu quota, period, memory limit, /dev/shm KiB)", got, want)
	}
	if err := rt.Stop(ctx, s.JobID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Wait(ctx, s.JobID); err != nil {
		t.Fatal(err)
	}
}

func TestReadoptAfterClose(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := jobDir(t, 1000, 1000)
	rt1 := newRuntime(t, "readopt")
	waiting := userSpec("readopt", dir, "waiting", `echo ready; while [ ! -e go ]; do sleep 0.05; done; exit 5`)
	stubborn := userSpec("readopt", dir, "stubborn", `trap '' TERM; echo ready; while :; do sleep 0.05; done`)
	for _, s := range []runtime.Spec{waiting, stubborn} {
		if err := rt1.Start(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []runtime.Spec{waiting, stubborn} {
		for {
			if out, _ := os.ReadFile(s.Stdout); strings.Contains(string(out), "ready") {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("job never ready")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The node daemon stops the stubborn job, then dies during the grace.
	if err := rt1.Stop(ctx, stubborn.JobID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := rt1.Close(); err != nil {
		t.Fatal(err)
	}

	rt2 := newRuntime(t, "readopt")
	closeRuntime(t, rt2)
	tasks, err := rt2.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{waiting.JobID, stubborn.JobID} {
		if !slices.Contains(tasks, runtime.Task{JobID: id, Node: "readopt", Running: true}) {
			t.Errorf("new runtime lists %+v, want %s running", tasks, id)
		}
	}
	// Still running, with no SIGKILL pending anywhere: the new daemon
	// re-issues the stop.
	if err := rt2.Stop(ctx, stubborn.JobID, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if code, err := rt2.Wait(ctx, stubborn.JobID); code != 256+9 || err != nil {
		t.Errorf("stubborn job: %d, %v, want 265", code, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, err := rt2.Wait(ctx, waiting.JobID); code != 5 || err != nil {
		t.Errorf("re-adopted job: %d, %v, want 5", code, err)
	}
}

func TestNodesShareContainerd(t *testing.T) {
	t.Parallel()
	ra, rb := newRuntime(t, "share-a"), newRuntime(t, "share-b")
	closeRuntime(t, ra)
	closeRuntime(t, rb)
	dir := jobDir(t, 1000, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The same job id on two nodes: two containers.
	sa := userSpec("share-a", dir, "a", "exit 1")
	sb := userSpec("share-b", dir, "b", "exit 2")
	sb.JobID = sa.JobID
	for _, p := range []struct {
		rt runtime.Runtime
		s  runtime.Spec
	}{{ra, sa}, {rb, sb}} {
		if err := p.rt.Start(ctx, p.s); err != nil {
			t.Fatal(err)
		}
	}
	if code, err := ra.Wait(ctx, sa.JobID); code != 1 || err != nil {
		t.Errorf("node a: %d, %v", code, err)
	}
	if code, err := rb.Wait(ctx, sb.JobID); code != 2 || err != nil {
		t.Errorf("node b: %d, %v", code, err)
	}
	for _, p := range []struct {
		rt   runtime.Runtime
		node string
		code int
	}{{ra, "share-a", 1}, {rb, "share-b", 2}} {
		tasks, err := p.rt.List(ctx)
		want := []runtime.Task{{JobID: sa.JobID, Node: p.node, ExitStatus: p.code}}
		if err != nil || !slices.Equal(tasks, want) {
			t.Errorf("node %s lists %+v (%v), want %+v", p.node, tasks, err, want)
		}
	}
	// A spec for another node is refused.
	sc := userSpec("share-b", dir, "c", "exit 0")
	if err := ra.Start(ctx, sc); !errors.Is(err, containerd.ErrBadSpec) {
		t.Errorf("Start of a job for another node: %v, want ErrBadSpec", err)
	}
}

func TestStartMissingImage(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "noimage")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	s := userSpec("noimage", dir, "noimage", "exit 0")
	s.Image = "sharq.test/none:latest"
	if err := rt.Start(context.Background(), s); err == nil {
		t.Fatal("Start with a missing image succeeded")
	}
	if tasks, err := rt.List(context.Background()); err != nil || len(tasks) != 0 {
		t.Errorf("after failed Start: %+v, %v", tasks, err)
	}
}

// The runtime checks the work directory and outputs as the job's user: a
// directory under another user's 0700 home or a kernel file system is
// refused before any container exists; /dev/null is a valid output.
func TestStartChecksPaths(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "paths")
	closeRuntime(t, rt)
	home := jobDir(t, 2000, 2000)
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(home, "pub")
	if err := os.Mkdir(secret, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(secret, 0o777); err != nil {
		t.Fatal(err)
	}
	own := jobDir(t, 1000, 1000)
	for _, tc := range []struct {
		name, workDir string
	}{
		{"another user's home", secret},
		{"host /proc", "/proc"},
		{"host /sys", "/sys"},
		{"host /dev", "/dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := userSpec("paths", own, "wd", "ls")
			s.WorkDir = tc.workDir
			err := rt.Start(context.Background(), s)
			if !errors.Is(err, runtime.ErrWorkDir) {
				t.Fatalf("Start: %v, want ErrWorkDir", err)
			}
			if _, err := rt.Wait(context.Background(), s.JobID); !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("after refused Start: Wait %v, want ErrNotFound", err)
			}
		})
	}
	t.Run("output to /dev/null", func(t *testing.T) {
		s := userSpec("paths", own, "null", "echo hi; pwd >&2")
		s.Stdout = "/dev/null"
		s.Stderr = filepath.Join(own, "err")
		code, _ := runJob(t, rt, s)
		if b, _ := os.ReadFile(s.Stderr); code != 0 || string(b) != own+"\n" {
			t.Errorf("status %d, stderr %q, want 0, %q", code, b, own+"\n")
		}
	})
}
