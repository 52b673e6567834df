package ctld

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// benchClientUID is who the submitting process runs as: not root (root
// may not submit) and with no passwd entry needed.
const benchClientUID = 4343

// BenchmarkSubmitSocket measures the controller's side of `qsub -h`: a
// client process (this test binary again, as benchClientUID) opens a
// connection to the controller's real Unix socket per submission, as each
// qsub does, sends a held job, reads the answer and closes. The
// controller's spool is the real one (bbolt and its log, fdatasync per
// group commit) in a temporary directory. The client is another process,
// so what this process spends is the controller's: ctld-µs/op is its CPU
// time (user+system, getrusage) per submission, ctxsw/op its context
// switches (voluntary and involuntary, every thread), allocs/op its heap
// allocations; commits/op its synced spool writes (group commits) per
// submission and µs/commit their mean duration. ns/op is the wall time per
// submission with clients submitting one after another (seq) or from 16 at
// once (par16); seq-queued10000 submits with 10,000 jobs waiting, which
// every scheduling pass considers; seq-gap2ms waits 2 ms before each
// submission, about what starting a qsub process takes, so that the
// controller falls idle between submissions as it does under a loop of
// qsub processes (its threads park, the runtime's sysmon sleeps) and each
// submission pays for waking it; its ns/op includes the gap.
func BenchmarkSubmitSocket(b *testing.B) {
	for _, bc := range []struct {
		par, queued int
		gap         time.Duration
	}{{1, 0, 0}, {16, 0, 0}, {1, 10000, 0}, {1, 0, 2 * time.Millisecond}} {
		name := "seq"
		if bc.par > 1 {
			name = fmt.Sprintf("par%d", bc.par)
		}
		if bc.queued > 0 {
			name += fmt.Sprintf("-queued%d", bc.queued)
		}
		if bc.gap > 0 {
			name += "-gap" + bc.gap.String()
		}
		par := bc.par
		b.Run(name, func(b *testing.B) {
			tc := newTestCluster(b, []string{"n1:8"}, twoShares)
			if bc.queued > 0 {
				// Jobs that wait for GPUs (the one node is not attached):
				// every scheduling pass considers them.
				fillQueue(b, tc, bc.queued)
			}
			// The client's way to the socket (the temporary directories are private).
			for _, d := range []string{tc.dir, filepath.Dir(tc.dir)} {
				if err := os.Chmod(d, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			benchSubmitClient(b, tc.sock, par, 50, bc.gap) // warm up: the first connections, the spool's log
			b.ReportAllocs()
			b.ResetTimer()
			var before, after syscall.Rusage
			w0, s0 := spoolWrites(b, tc.ctl)
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			benchSubmitClient(b, tc.sock, par, b.N, bc.gap)
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			b.StopTimer()
			w1, s1 := spoolWrites(b, tc.ctl)
			b.ReportMetric(float64(w1-w0)/float64(b.N), "commits/op")
			if w1 > w0 {
				b.ReportMetric((s1-s0)*1e6/float64(w1-w0), "µs/commit")
			}
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "ctld-µs/op")
			cs := after.Nvcsw + after.Nivcsw - before.Nvcsw - before.Nivcsw
			b.ReportMetric(float64(cs)/float64(b.N), "ctxsw/op")
		})
	}
}

// spoolWrites reads the controller's spool write count and seconds from
// its metrics (sharq_spool_write_seconds).
func spoolWrites(b *testing.B, c *Controller) (uint64, float64) {
	mfs, err := c.met.reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "sharq_spool_write_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	b.Fatal("no sharq_spool_write_seconds")
	return 0, 0
}

// fillQueue queues n one-GPU jobs of alice's, in batches on the loop.
func fillQueue(b *testing.B, tc *testCluster, n int) {
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	spec := &api.SubmitSpec{Job: api.JobSpec{Name: "q", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}}
	for done := 0; done < n; done += 1000 {
		var e *api.Error
		if err := tc.ctl.do(context.Background(), func() {
			for i := done; i < min(done+1000, n) && e == nil; i++ {
				_, e = tc.ctl.submit(id, spec)
			}
		}); err != nil || e != nil {
			b.Fatal(err, e)
		}
	}
}

// benchSubmitClient runs n submissions from par connections at a time in a
// child process and waits for it; the timer runs only while it submits.
func benchSubmitClient(b *testing.B, sock string, par, n int, gap time.Duration) {
	b.Helper()
	b.StopTimer()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubmitBenchClient$")
	cmd.Env = append(os.Environ(), "SHARQ_BENCH_CLIENT="+sock, fmt.Sprintf("SHARQ_BENCH_N=%d", n), fmt.Sprintf("SHARQ_BENCH_PAR=%d", par),
		"SHARQ_BENCH_GAP="+gap.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	if l, err := out.ReadString('\n'); err != nil || l != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf("client: %q %v: %s", l, err, stderr.Bytes())
	}
	b.StartTimer()
	stdin.Write([]byte("go\n"))
	l, err := out.ReadString('\n')
	b.StopTimer()
	if werr := cmd.Wait(); err != nil || werr != nil || l != "done\n" {
		b.Fatalf("client: %q %v %v: %s", l, err, werr, stderr.Bytes())
	}
}

// TestSubmitBenchClient is BenchmarkSubmitSocket's client process; it does
// nothing unless the benchmark started it.
func TestSubmitBenchClient(t *testing.T) {
	sock := os.Getenv("SHARQ_BENCH_CLIENT")
	if sock == "" {
		return // a test run, not the benchmark's child: nothing to do, nothing to check
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n, err1 := strconv.Atoi(os.Getenv("SHARQ_BENCH_N"))
	par, err2 := strconv.Atoi(os.Getenv("SHARQ_BENCH_PAR"))
	gap, err3 := time.ParseDuration(os.Getenv("SHARQ_BENCH_GAP"))
	if err1 != nil || err2 != nil || err3 != nil || par < 1 {
		fail(fmt.Errorf("bad SHARQ_BENCH_N/PAR/GAP: %v %v %v", err1, err2, err3))
	}
	if err := syscall.Setgid(benchClientUID); err != nil {
		fail(err)
	}
	if err := syscall.Setuid(benchClientUID); err != nil {
		fail(err)
	}
	// What qsub -h sends for a small script (cli/qsub.go): the script, the
	// PBS_O_* environment, a hold.
	req := &api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{
		Name: "noop.sh", Share: "a", Script: "#!/bin/sh\n#PBS -l select=1:ngpus=1\ntrue\n", WorkDir: "/tmp", Hold: "u",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1},
		Env: map[string]string{"PBS_O_HOME": "/home/u", "PBS_O_LOGNAME": "u", "PBS_O_PATH": "/usr/local/bin:/usr/bin:/bin",
			"PBS_O_SHELL": "/bin/bash", "PBS_O_LANG": "C.UTF-8", "PBS_O_WORKDIR": "/tmp", "PBS_O_HOST": "login1"},
	}}}
	var line bytes.Buffer
	if err := api.EncodeRequest(&line, req); err != nil {
		fail(err)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fail(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, par)
	for w := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += par {
				if gap > 0 {
					time.Sleep(gap)
				}
				if err := benchSubmitOne(sock, line.Bytes()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		fail(err)
	}
	fmt.Println("done")
	os.Exit(0)
}

// benchSubmitOne is one qsub's conversation: connect, request, answer, close.
func benchSubmitOne(sock string, line []byte) error {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write(line); err != nil {
		return err
	}
	var resp api.Response
	if err := api.NewDecoder(conn).ReadResponse(&resp); err != nil {
		return err
	}
	if resp.Error != nil || resp.JobID == "" {
		return fmt.Errorf("submit: %+v", resp.Error)
	}
	return nil
}
