//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// haTTL is the controllers' session TTL in these tests (the default is 5 s;
// shorter keeps the suite's time small), and haKills how many times the
// leader is killed. SHARQ_E2E_HA_TTL and SHARQ_E2E_HA_KILLS change them to
// measure failover (README: High availability, figures).
var (
	haTTL   = envDuration("SHARQ_E2E_HA_TTL", 2*time.Second)
	haKills = int(envDuration("SHARQ_E2E_HA_KILLS", 5))
)

func envDuration(key string, def time.Duration) time.Duration {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err == nil {
		return time.Duration(n)
	}
	return def
}

// haCluster is three etcd member processes, three sharqctld on them and
// node daemons running real containers.
type haCluster struct {
	*cluster
	members  []*exec.Cmd
	mcfg     []etcdtest.MemberConfig
	clientEP []string
	ctls     []*exec.Cmd
	ctlDone  []chan struct{} // closed when that controller has exited
	confs    []string
	socks    []string
	clients  []string // each controller's TCP client port (MUNGE)
	munge    *munged.Daemon
	etcd     *clientv3.Client

	mu    sync.Mutex
	acked map[string]int // acknowledged job id -> times qsub returned it
}

func newHACluster(t *testing.T, nodes []string) *haCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "sharq-ha-")
	must(t, err)
	os.Chmod(dir, 0o755)
	c := &cluster{t: t, dir: dir, nodes: map[string]*exec.Cmd{}, logs: &logBuffer{}}
	h := &haCluster{cluster: c, acked: map[string]int{}}
	c.ns = testenv.Namespace()
	c.image, err = testenv.BusyboxImage(context.Background(), ctrSock, c.ns)
	must(t, err)
	c.workdir = filepath.Join(dir, "home", "alice")
	must(t, os.MkdirAll(c.workdir, 0o755))
	must(t, os.Chown(c.workdir, alice, alice))
	must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("e2e-secret\n"), 0o600))
	t.Cleanup(h.close)

	// Three etcd members, each its own process (this test binary re-run).
	ports, err := etcdtest.FreePorts(6)
	must(t, err)
	var initial []string
	for i := 0; i < 3; i++ {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	for i := 0; i < 3; i++ {
		mc := etcdtest.MemberConfig{Name: fmt.Sprintf("m%d", i), Dir: filepath.Join(dir, fmt.Sprintf("etcd%d", i)),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			Cluster: strings.Join(initial, ","), New: true}
		h.mcfg = append(h.mcfg, mc)
		h.clientEP = append(h.clientEP, mc.ClientURL)
		h.members = append(h.members, nil)
		h.startMember(i)
	}
	h.etcd, err = clientv3.New(clientv3.Config{Endpoints: h.clientEP, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	must(t, err)
	h.waitEtcd(30 * time.Second)

	// One munge key for the controllers and the TCP clients.
	key := filepath.Join(dir, "munge.key")
	must(t, munged.NewKey(key))
	h.munge, err = munged.Start(context.Background(), filepath.Join(dir, "munge"), key)
	must(t, err)

	// Three controllers: each its own socket, node address and client
	// port, one list.
	var addrs []string
	for i := 0; i < 3; i++ {
		addrs = append(addrs, freeAddr(t))
		h.clients = append(h.clients, freeAddr(t))
	}
	s := spec{nodes: nodes, shares: openShares + fmt.Sprintf(`
[etcd]
endpoints = [%s]
session_ttl = %q
timeout = "2s"
`, quoteAll(h.clientEP), haTTL.String()), grace: "5s",
		extra: fmt.Sprintf("spool = \"etcd\"\ncontrollers = [%s]\n", quoteAll(addrs))}
	for i := 0; i < 3; i++ {
		c.sock = filepath.Join(dir, fmt.Sprintf("ctl%d.sock", i))
		c.addr = addrs[i]
		conf := filepath.Join(dir, fmt.Sprintf("ctl%d.toml", i))
		// c.toml's node_timeout (20 s) is well above a failover (2 s TTL
		// and a campaign), as the default 30 s is above the default 5 s TTL.
		text := strings.Replace(c.toml(s), "[cluster]\n", fmt.Sprintf("[cluster]\nclient_listen = %q\nmunge_socket = %q\n",
			h.clients[i], h.munge.Socket), 1)
		must(t, os.WriteFile(conf, []byte(text), 0o644))
		h.confs, h.socks = append(h.confs, conf), append(h.socks, c.sock)
		h.ctls, h.ctlDone = append(h.ctls, nil), append(h.ctlDone, nil)
		h.startCtl(i)
	}
	c.conf = h.confs[0] // the nodes' configuration: every controller is in it
	for _, n := range nodes {
		c.startNode(n)
	}
	h.eventually(30*time.Second, func() (bool, string) {
		out, _, err := h.call(0, 5*time.Second, "sharqctl", "show", "nodes")
		return err == nil && strings.Count(out, " up ") >= len(nodes), out
	})
	return h
}

func (h *haCluster) startMember(i int) {
	h.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), etcdtest.MemberProcessEnv(h.mcfg[i]))
	cmd.Stdout = logWriter{fmt.Sprintf("etcd%d: ", i), h.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(h.t, cmd.Start())
	h.members[i] = cmd
	h.mcfg[i].New = false // a restart joins the existing cluster
}

func (h *haCluster) startCtl(i int) {
	h.t.Helper()
	cmd := h.daemon("sharqctld", "--config", h.confs[i], "--log-level", "debug")
	cmd.Stdout = logWriter{fmt.Sprintf("sharqctld%d: ", i), h.logs}
	cmd.Stderr = cmd.Stdout
	must(h.t, cmd.Start())
	done := make(chan struct{})
	h.ctls[i], h.ctlDone[i] = cmd, done
	go func() { cmd.Wait(); close(done) }() // reaped when it stops on its own (lost leadership)
}

// ctlAlive reports whether controller i runs.
func (h *haCluster) ctlAlive(i int) bool {
	select {
	case <-h.ctlDone[i]:
		return false
	default:
		return true
	}
}

// killCtl kills controller i with SIGKILL and waits until it is gone.
func (h *haCluster) killCtl(i int) {
	h.ctls[i].Process.Signal(syscall.SIGKILL)
	<-h.ctlDone[i]
}

func (h *haCluster) close() {
	for _, n := range h.nodes {
		kill9(n)
	}
	for i, c := range h.ctls {
		if c != nil && c.Process != nil {
			c.Process.Signal(syscall.SIGCONT)
			h.killCtl(i)
		}
	}
	for _, m := range h.members {
		if m != nil && m.Process != nil {
			m.Process.Signal(syscall.SIGKILL)
			m.Wait()
		}
	}
	if h.etcd != nil {
		h.etcd.Close()
	}
	if h.munge != nil {
		h.munge.Stop()
	}
	h.cleanupContainers()
	if h.t.Failed() {
		h.t.Logf("daemon logs:\n%s", h.logs)
	}
	os.RemoveAll(h.dir)
}

func (h *haCluster) waitEtcd(d time.Duration) {
	h.t.Helper()
	h.eventually(d, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := h.etcd.Put(ctx, "/health", "ok")
		return err == nil, fmt.Sprint(err)
	})
}

// leaderIndex is the controller that leads now (-1 if none), from etcd.
func (h *haCluster) leaderIndex() int {
	return etcdLeader(h.etcd, "/sharq/e2e/leader", h.ctls, func(int) bool { return true })
}

func (h *haCluster) waitLeader(not int, d time.Duration) int {
	h.t.Helper()
	return waitNewLeader(h.t, h.logs, d, not, h.leaderIndex)
}

// etcdLeader is the index in ctls of the controller whose key leads under
// prefix in etcd; -1 if none does, or running says its process is gone.
func etcdLeader(cli *clientv3.Client, prefix string, ctls []*exec.Cmd, running func(int) bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cs, err := leader.List(ctx, cli, prefix)
	if err != nil || len(cs) == 0 {
		return -1
	}
	for i, c := range ctls {
		if c != nil && c.Process != nil && running(i) && c.Process.Pid == cs[0].Info.PID {
			return i
		}
	}
	return -1
}

// waitNewLeader waits up to d until index gives a leader other than not,
// and returns it.
func waitNewLeader(t testing.TB, logs *logBuffer, d time.Duration, not int, index func() int) int {
	t.Helper()
	var l int
	eventually(t, d, logs, func() (bool, string) {
		l = index()
		return l >= 0 && l != not, fmt.Sprintf("leader %d", l)
	})
	return l
}

var errNoController = errors.New("no controller reachable")

// call runs a client command as uid against the controllers in turn, as a
// client with every controller in its list does: a controller that is not
// serving (a follower waits in its campaign; a dead one left its socket)
// refuses the connection, and the next is tried.
func (h *haCluster) call(uid int, timeout time.Duration, name string, args ...string) (string, string, error) {
	var lastErr error
	var lastOut string
	for _, sock := range h.socks {
		cmd := exec.Command(filepath.Join(binDir, name), args...)
		cmd.Env = []string{"SHARQ_SOCKET=" + sock, "PATH=/usr/bin:/bin", "HOME=" + h.workdir, "LANG=C"}
		cmd.Dir = h.workdir
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		must(h.t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(timeout):
			// A paused controller's socket accepts and never answers; what
			// it was sent cannot commit (it is fenced once deposed), so the
			// next controller is tried.
			cmd.Process.Kill()
			<-done
			lastErr = fmt.Errorf("%s: no answer within %v", sock, timeout)
			continue
		}
		if err == nil {
			return o.String(), e.String(), nil
		}
		lastErr, lastOut = fmt.Errorf("%w: %s", err, strings.TrimSpace(e.String())), e.String()
		if !strings.Contains(e.String(), "cannot reach sharqctld") || strings.Contains(e.String(), "sending") {
			return o.String(), e.String(), lastErr // an answer, or a request that may have arrived
		}
	}
	return "", lastOut, fmt.Errorf("%w: %v", errNoController, lastErr)
}

// submitTCP runs one qsub as alice from "another host": over TCP with
// MUNGE, SHARQ_SERVER=servers, the client's own failover (client package)
// with a per-server answer timeout. An acknowledged id is recorded.
func (h *haCluster) submitTCP(servers []string, answer time.Duration, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "qsub"), args...)
	cmd.Env = []string{"SHARQ_SERVER=" + strings.Join(servers, ","), "SHARQ_MUNGE_SOCKET=" + h.munge.Socket,
		"SHARQ_SERVER_TIMEOUT=" + answer.String(), "SHARQ_CONF=" + filepath.Join(h.dir, "none.toml"),
		"PATH=/usr/bin:/bin", "HOME=" + h.workdir, "LANG=C"}
	cmd.Dir = h.workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: alice, Gid: alice}}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("qsub over TCP to %v: %w: %s", servers, err, strings.TrimSpace(e.String()))
	}
	id := strings.TrimSpace(o.String())
	h.mu.Lock()
	h.acked[id]++
	h.mu.Unlock()
	return id, nil
}

// submit runs one qsub as alice; an acknowledged id is recorded.
func (h *haCluster) submit(args ...string) (string, error) {
	out, _, err := h.call(alice, 5*time.Second, "qsub", args...)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(out)
	h.mu.Lock()
	h.acked[id]++
	h.mu.Unlock()
	return id, nil
}

// submitter submits in a loop until stop is closed; every fifth job runs
// a container, the others wait held.
func (h *haCluster) submitter(stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			args := []string{"-q", "a", "-h", "--", "/bin/true"}
			if i%5 == 0 {
				args = []string{"-q", "b", "-l", "ngpus=1", "--", "/bin/true"}
			}
			if _, err := h.submit(args...); err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	return d
}

// loginSubmitter submits held jobs over TCP with MUNGE until stop is
// closed, as qsub on a login host does: SHARQ_SERVER names every
// controller and the client finds the leader itself. Its answer
// (errors, with the number of submissions) comes when it ends.
func (h *haCluster) loginSubmitter(stop <-chan struct{}) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var errs []string
		n := 0
		for {
			select {
			case <-stop:
				out <- append(errs, fmt.Sprintf("(%d submissions)", n))
				return
			default:
			}
			n++
			if _, err := h.submitTCP(h.clients, 30*time.Second, "-q", "a", "-h", "--", "/bin/true"); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}()
	return out
}

// firstAck waits for the first acknowledged submission and says how long
// it took from since.
func (h *haCluster) firstAck(since time.Time, d time.Duration) time.Duration {
	h.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := h.submit("-q", "a", "-h", "--", "/bin/true"); err == nil {
			return time.Since(since)
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("no submission acknowledged within %v\n%s", d, h.logs)
	return 0
}

var (
	startedRE = regexp.MustCompile(`job container started.*? job=(\S+) run=(\d+)`)
	exitedRE  = regexp.MustCompile(`job exited.*? job=(\S+) run=(\d+) exit_status=0 `)
)

// check is the checker: every acknowledged id is in etcd, no id was
// acknowledged twice, no run of a job started twice, no job that exited
// started again (its exit lost in a failover, the job requeued as if its
// node were gone: the job ran twice), and no job has two containers
// running.
func (h *haCluster) check() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := etcdspool.Open(ctx, h.etcd, etcdspool.Options{Prefix: "/sharq/e2e/spool/"})
	must(h.t, err)
	stored := map[string]bool{}
	must(h.t, sp.Scan(ctx, func(r spool.Record) error { stored[r.ID] = true; return nil }))
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, n := range h.acked {
		if !stored[id] {
			h.t.Errorf("acknowledged job %s is not in etcd", id)
		}
		if n > 1 {
			h.t.Errorf("job id %s acknowledged %d times", id, n)
		}
	}
	starts := map[string]int{}
	for _, m := range startedRE.FindAllStringSubmatch(h.logs.String(), -1) {
		starts[m[1]+" run "+m[2]]++
	}
	for run, n := range starts {
		if n > 1 {
			h.t.Errorf("job %s started %d times", run, n)
		}
	}
	for _, m := range exitedRE.FindAllStringSubmatch(h.logs.String(), -1) {
		var done int
		fmt.Sscan(m[2], &done)
		for later := done + 1; later <= done+10; later++ {
			if starts[fmt.Sprintf("%s run %d", m[1], later)] > 0 {
				h.t.Errorf("job %s exited (run %d, status 0) and started again as run %d: it ran twice", m[1], done, later)
			}
		}
	}
	h.t.Logf("checker: %d acknowledged, %d stored, %d runs started", len(h.acked), len(stored), len(starts))
}

// ids of acked jobs, sorted (for messages).
func (h *haCluster) ackedIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id := range h.acked {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func TestHA(t *testing.T) {
	h := newHACluster(t, []string{"n1"})
	l := h.waitLeader(-1, 30*time.Second)
	// A long job whose container must survive every failover.
	h.script("long.sh", "echo $$ > long.pid\nsleep 600\n")
	long, err := h.submit("-q", "a", "-l", "ngpus=1", "long.sh")
	must(t, err)
	h.eventually(30*time.Second, func() (bool, string) {
		out, _, err := h.call(0, 5*time.Second, "qstat", "-f", long)
		return err == nil && strings.Contains(out, "job_state = R"), out
	})

	t.Run("a client that knows only a follower", func(t *testing.T) {
		for i := range h.ctls {
			if i == l {
				continue
			}
			// The follower answers with the leader's address; qsub follows it.
			id, err := h.submitTCP([]string{h.clients[i]}, 15*time.Second, "-q", "a", "-h", "--", "/bin/true")
			if err != nil {
				t.Fatalf("via follower %d: %v", i, err)
			}
			t.Logf("via follower %d: acknowledged %s by the leader", i, id)
		}
	})

	t.Run("kill -9 of the leader, repeatedly, under submissions", func(t *testing.T) {
		stop := make(chan struct{})
		done := h.submitter(stop)
		login := h.loginSubmitter(stop)
		var took []time.Duration
		for round := 0; round < haKills; round++ {
			time.Sleep(300 * time.Millisecond)
			h.killCtl(l)
			killed := time.Now()
			h.startCtl(l) // systemd restarts it: now a candidate
			took = append(took, h.firstAck(killed, 30*time.Second))
			l = h.waitLeader(-1, 30*time.Second)
		}
		close(stop)
		<-done
		// A login host's qsub rides through every failover: no error.
		if errs := <-login; len(errs) > 1 {
			t.Errorf("%d qsub over TCP failed across %d kills of the leader %s:\n%s", len(errs)-1, haKills, errs[len(errs)-1],
				strings.Join(errs[:len(errs)-1], "\n"))
		} else {
			t.Logf("qsub over TCP to every controller across %d kills: no error %s", haKills, errs[0])
		}
		slices.Sort(took)
		t.Logf("kill -9 to first acknowledged qsub (TTL %v): p50 %v, max %v, all %v", haTTL, took[len(took)/2], took[len(took)-1], took)
	})

	t.Run("graceful stop hands over at once", func(t *testing.T) {
		h.ctls[l].Process.Signal(syscall.SIGTERM)
		stopped := time.Now()
		<-h.ctlDone[l]
		took := h.firstAck(stopped, 30*time.Second)
		t.Logf("SIGTERM (resign) to first acknowledged qsub: %v", took)
		h.startCtl(l)
		l = h.waitLeader(-1, 30*time.Second)
	})

	t.Run("SIGSTOP of the leader beyond its TTL", func(t *testing.T) {
		paused := l
		h.ctls[paused].Process.Signal(syscall.SIGSTOP)
		// A TCP client whose first server is the paused leader gets through
		// via the others: no answer there within its per-server timeout
		// (a third of SHARQ_SERVER_TIMEOUT, above the TTL), then a
		// follower names the new leader.
		servers := []string{h.clients[paused]}
		for i := range h.clients {
			if i != paused {
				servers = append(servers, h.clients[i])
			}
		}
		answer := 3 * (haTTL + time.Second)
		sent := time.Now()
		if _, err := h.submitTCP(servers, answer, "-q", "a", "-h", "--", "/bin/true"); err != nil {
			t.Fatalf("with the leader paused: %v", err)
		}
		t.Logf("qsub over TCP with its first server paused: acknowledged after %v (answer timeout %v)",
			time.Since(sent).Round(time.Millisecond), answer)
		l = h.waitLeader(paused, 30*time.Second)
		h.firstAck(time.Now(), 30*time.Second)
		time.Sleep(haTTL)
		logLen := len(h.logs.String())
		h.ctls[paused].Process.Signal(syscall.SIGCONT)
		// It notices it lost and stops; systemd would restart it.
		h.eventually(20*time.Second, func() (bool, string) {
			return !h.ctlAlive(paused), "still running after SIGCONT"
		})
		after := h.logs.String()[logLen:]
		prefix := fmt.Sprintf("sharqctld%d: ", paused)
		for _, line := range strings.Split(after, "\n") {
			if strings.HasPrefix(line, prefix) && strings.Contains(line, "scheduling pass") && strings.Contains(line, "starts=1") {
				t.Errorf("the woken leader scheduled a start: %s", line)
			}
		}
		h.startCtl(paused)
	})

	t.Run("kill -9 of etcd members", func(t *testing.T) {
		for _, which := range []string{"raft leader", "follower"} {
			i := h.etcdMember(which == "raft leader")
			kill9(h.members[i])
			h.firstAck(time.Now(), 30*time.Second)
			h.startMember(i)
			h.waitEtcd(30 * time.Second)
		}
		h.firstAck(time.Now(), 30*time.Second)
	})

	t.Run("quorum lost and back", func(t *testing.T) {
		a, b := (h.etcdMember(true)+1)%3, (h.etcdMember(true)+2)%3
		kill9(h.members[a])
		kill9(h.members[b])
		before := len(h.ackedIDs())
		deadline := time.Now().Add(6 * time.Second)
		var errs []string
		for time.Now().Before(deadline) {
			if id, err := h.submit("-q", "a", "-h", "--", "/bin/true"); err == nil {
				t.Fatalf("job %s acknowledged without quorum", id)
			} else if len(errs) == 0 || errs[len(errs)-1] != err.Error() {
				errs = append(errs, err.Error())
			}
		}
		if len(h.ackedIDs()) != before {
			t.Fatal("acknowledged without quorum")
		}
		// A request caught in the leader's failed write is answered with why;
		// then the leader stops and no controller serves until etcd is back.
		for _, e := range errs {
			if strings.Contains(e, "not acknowledged") && !strings.Contains(e, "quorum") {
				t.Errorf("answer without quorum does not say why: %s", e)
			}
		}
		t.Logf("without quorum, qsub says:\n%s", strings.Join(errs, "\n"))
		h.startMember(a)
		h.startMember(b)
		h.waitEtcd(30 * time.Second)
		// Controllers that stopped are restarted, as systemd does.
		for i := range h.ctls {
			if !h.ctlAlive(i) {
				h.startCtl(i)
			}
		}
		h.firstAck(time.Now(), 60*time.Second)
		l = h.waitLeader(-1, 30*time.Second)
	})

	// The long job ran through all of it, in its first container.
	out, _, err := h.call(0, 5*time.Second, "qstat", "-f", long)
	must(t, err)
	if !strings.Contains(out, "job_state = R") {
		t.Errorf("the long job after the failovers:\n%s", out)
	}
	h.check()
}

// etcdMember returns a running member: the raft leader, or a follower.
func (h *haCluster) etcdMember(raftLeader bool) int {
	h.t.Helper()
	for i, ep := range h.clientEP {
		if !alive(h.members[i]) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := h.etcd.Status(ctx, ep)
		cancel()
		if err != nil {
			continue
		}
		if (st.Leader == st.Header.MemberId) == raftLeader {
			return i
		}
	}
	h.t.Fatalf("no etcd member that is raft leader=%v", raftLeader)
	return -1
}

func alive(cmd *exec.Cmd) bool {
	return cmd != nil && cmd.Process != nil && cmd.Process.Signal(syscall.Signal(0)) == nil && cmd.ProcessState == nil
}
