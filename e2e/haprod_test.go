//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/internal/testcert"
	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// prodCluster is an HA cluster shaped as sites run it (issue 28): three
// controller hosts, each with an etcd member and a sharqctld, two GPU-node
// hosts each with its own containerd and sharqd, and a login host, every
// host a network namespace of a lab with its own munged (one key). Nodes
// and controllers speak mutual TLS, each host with a certificate of one CA
// naming only that host; client commands speak TLS to the controllers
// (client_tls; MUNGE says who the user is).
type prodCluster struct {
	t       *testing.T
	dir     string
	lab     *lab
	logs    *logBuffer
	workdir string
	conf    map[string]string // host -> its cluster.toml
	munge   map[string]*munged.Daemon

	ctlHosts []string
	members  []*exec.Cmd
	mcfg     []etcdtest.MemberConfig
	ctls     []*exec.Cmd
	ctlDone  []chan struct{}
	nodes    map[string]*exec.Cmd
	etcd     *clientv3.Client // the test's, dialling from the login host

	mu    sync.Mutex
	acked map[string]int
	gpu   map[string]bool // acknowledged jobs that run a container
	subs  []prodSub
}

// prodSub is one qsub of the login host's stream.
type prodSub struct {
	start, end time.Time
	id         string
	err        string
}

const prodName = "prod"

// prodTTL is the controllers' session TTL here: the default, 5 s, as sites
// run it (SHARQ_E2E_HAPROD_TTL changes it). Below about 3 s the loss of the
// leader's etcd member can depose it: etcd's client waits 500 ms before it
// reopens the lease's keep-alive stream on another member, and renewals
// come every third of the TTL, so the gap can pass the two thirds of a TTL
// a leader's lease stays valid without news.
var prodTTL = envDuration("SHARQ_E2E_HAPROD_TTL", 5*time.Second)

func newProdCluster(t *testing.T) *prodCluster {
	t.Helper()
	static := staticClients(t)
	dir, err := os.MkdirTemp("", "sharq-prod-")
	must(t, err)
	must(t, os.Chmod(dir, 0o755))
	p := &prodCluster{t: t, dir: dir, logs: &logBuffer{}, conf: map[string]string{}, munge: map[string]*munged.Daemon{},
		nodes: map[string]*exec.Cmd{}, acked: map[string]int{}, gpu: map[string]bool{}, ctlHosts: []string{"ctl1", "ctl2", "ctl3"}}
	t.Cleanup(func() { os.RemoveAll(dir) })
	hosts := []string{"ctl1", "ctl2", "ctl3", "n1", "n2", "login"}
	p.lab = newLab(t, hosts...)
	t.Cleanup(p.close)
	p.workdir = filepath.Join(dir, "home", "alice")
	must(t, os.MkdirAll(p.workdir, 0o755))
	must(t, os.Chown(p.workdir, alice, alice))
	must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("prod-secret\n"), 0o600))

	key := filepath.Join(dir, "munge.key")
	must(t, munged.NewKey(key))
	for _, h := range hosts {
		d, err := munged.Start(context.Background(), filepath.Join(dir, "munge-"+h), key)
		must(t, err)
		t.Cleanup(d.Stop)
		p.munge[h] = d
	}

	// One CA; each host's certificate names that host alone: a controller
	// by its address (what nodes and clients dial), a node by its name.
	certDir := filepath.Join(dir, "tls")
	must(t, os.MkdirAll(certDir, 0o755))
	ca := testcert.NewCA(t, certDir)
	certs := map[string][2]string{}
	for _, h := range hosts {
		name := h
		if strings.HasPrefix(h, "ctl") {
			name = p.lab.hosts[h].IP
		}
		c, k := ca.Issue(t, certDir, h, h, name)
		certs[h] = [2]string{c, k}
	}

	// Three etcd members, one per controller host, on that host's address.
	var initial, endpoints, nodeAddrs, servers []string
	for _, h := range p.ctlHosts {
		ip := p.lab.hosts[h].IP
		initial = append(initial, fmt.Sprintf("%s=http://%s:2380", h, ip))
		endpoints = append(endpoints, fmt.Sprintf("http://%s:2379", ip))
		nodeAddrs = append(nodeAddrs, ip+":6820")
		servers = append(servers, ip+":6822")
	}
	for i, h := range p.ctlHosts {
		ip := p.lab.hosts[h].IP
		p.mcfg = append(p.mcfg, etcdtest.MemberConfig{Name: h, Dir: filepath.Join(dir, "etcd-"+h),
			ClientURL: "http://" + ip + ":2379", PeerURL: "http://" + ip + ":2380",
			Cluster: strings.Join(initial, ","), New: true})
		p.members = append(p.members, nil)
		p.startMember(i)
	}
	p.etcd, err = clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(_ context.Context, addr string) (net.Conn, error) {
			return p.lab.hosts["login"].dial(addr)
		})}})
	must(t, err)
	p.eventually(60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := p.etcd.Put(ctx, "/health", "ok")
		return err == nil, fmt.Sprint(err)
	})

	// Each node host runs its own containerd in its namespace.
	runtimes := map[string][2]string{}
	for _, h := range []string{"n1", "n2"} {
		var d *testenv.Daemon
		must(t, inNetns(p.lab.hosts[h].NS, func() error {
			var err error
			d, err = testenv.StartContainerd("")
			return err
		}))
		t.Cleanup(func() { d.Stop() })
		ns := testenv.Namespace()
		_, err := testenv.BusyboxImage(context.Background(), d.Socket, ns)
		must(t, err)
		runtimes[h] = [2]string{d.Socket, ns}
	}

	for _, h := range hosts {
		must(t, os.MkdirAll(filepath.Join(dir, h), 0o755))
		ctl := nodeAddrs[0] // nodes: unused with controllers set
		listen, clientListen := "", ""
		if strings.HasPrefix(h, "ctl") {
			ip := p.lab.hosts[h].IP
			ctl, listen, clientListen = ip+":6820", fmt.Sprintf("listen = %q\n", ip+":6820"), fmt.Sprintf("client_listen = %q\n", ip+":6822")
		}
		rt := runtimes[h]
		if rt[0] == "" {
			rt = [2]string{filepath.Join(dir, "no-containerd.sock"), "sharq"}
		}
		text := fmt.Sprintf(`[cluster]
name = %q
spool = "etcd"
spool_dir = %q
socket = %q
%scontroller = %q
controllers = [%s]
%sservers = [%s]
client_tls = true
tls_cert = %q
tls_key = %q
tls_ca = %q
munge_socket = %q
secret_file = %q
heartbeat_interval = "1s"
node_timeout = "20s"
checkpoint_root = %q

[etcd]
endpoints = [%s]
session_ttl = %q
timeout = "2s"
`, prodName, filepath.Join(dir, h, "spool"), filepath.Join(dir, h, "sharq.sock"), listen, ctl, quoteAll(nodeAddrs),
			clientListen, quoteAll(servers), certs[h][0], certs[h][1], ca.File, p.munge[h].Socket,
			filepath.Join(dir, "secret"), filepath.Join(dir, "ckpt"), quoteAll(endpoints), prodTTL.String()) +
			twoNodeTOML(rt[0], rt[1], static)
		p.conf[h] = filepath.Join(dir, h+".toml")
		must(t, os.WriteFile(p.conf[h], []byte(text), 0o644))
	}
	for i := range p.ctlHosts {
		p.ctls, p.ctlDone = append(p.ctls, nil), append(p.ctlDone, nil)
		p.startCtl(i)
	}
	for _, n := range []string{"n1", "n2"} {
		p.nodes[n] = p.daemon(n, "sharqd", "--config", p.conf[n], "--node", n,
			"--state-dir", filepath.Join(dir, n, "state"), "--log-level", "debug")
	}
	p.eventually(90*time.Second, func() (bool, string) {
		out, errOut, err := p.login("sharqctl", "show", "nodes")
		return err == nil && strings.Count(out, " up ") == 2, out + errOut
	})
	return p
}

func (p *prodCluster) daemon(host, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout = logWriter{host + " " + name + ": ", p.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(p.t, p.lab.hosts[host].start(cmd))
	return cmd
}

func (p *prodCluster) startMember(i int) {
	p.t.Helper()
	h := p.ctlHosts[i]
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), etcdtest.MemberProcessEnv(p.mcfg[i]))
	cmd.Stdout = logWriter{h + " etcd: ", p.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(p.t, p.lab.hosts[h].start(cmd))
	p.members[i] = cmd
	p.mcfg[i].New = false
}

func (p *prodCluster) startCtl(i int) {
	p.t.Helper()
	h := p.ctlHosts[i]
	cmd := p.daemon(h, "sharqctld", "--config", p.conf[h], "--log-level", "debug")
	done := make(chan struct{})
	p.ctls[i], p.ctlDone[i] = cmd, done
	go func() { cmd.Wait(); close(done) }()
}

func (p *prodCluster) ctlAlive(i int) bool {
	select {
	case <-p.ctlDone[i]:
		return false
	default:
		return true
	}
}

func (p *prodCluster) close() {
	for _, n := range p.nodes {
		kill9(n)
	}
	for i, c := range p.ctls {
		if c != nil && c.Process != nil {
			c.Process.Signal(syscall.SIGCONT)
			c.Process.Signal(syscall.SIGKILL)
			<-p.ctlDone[i]
		}
	}
	for _, m := range p.members {
		kill9(m)
	}
	if p.etcd != nil {
		p.etcd.Close()
	}
	if p.t.Failed() {
		p.t.Logf("daemon logs:\n%s", p.logs)
	}
}

func (p *prodCluster) eventually(d time.Duration, f func() (bool, string)) {
	p.t.Helper()
	eventually(p.t, d, p.logs, f)
}

// login runs a client command as alice on the login host with its
// configuration (servers: the three controllers, TLS, MUNGE).
func (p *prodCluster) login(name string, args ...string) (string, string, error) {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = []string{"SHARQ_CONF=" + p.conf["login"], "PATH=/usr/bin:/bin", "HOME=" + p.workdir, "LANG=C"}
	cmd.Dir = p.workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: alice, Gid: alice}}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := p.lab.hosts["login"].start(cmd); err != nil {
		return "", "", err
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	return o.String(), e.String(), err
}

// leaderIndex is the controller that leads now (-1 if none), from etcd.
func (p *prodCluster) leaderIndex() int {
	return etcdLeader(p.etcd, "/sharq/"+prodName+"/leader", p.ctls, p.ctlAlive)
}

func (p *prodCluster) waitLeader(not int, d time.Duration) int {
	p.t.Helper()
	return waitNewLeader(p.t, p.logs, d, not, p.leaderIndex)
}

// stream is one submitting loop of the login host: every third job of a
// container loop runs a 1-GPU container that exits at once, the others
// wait held.
func (p *prodCluster) stream(stop <-chan struct{}, containers bool, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		args := []string{"-q", "a", "-h", "--", "/bin/true"}
		gpu := containers && i%3 == 0
		if gpu {
			args = []string{"-q", "a", "-l", "ngpus=1", "-o", "/dev/null", "-e", "/dev/null", "--", "/bin/true"}
		}
		s := prodSub{start: time.Now()}
		out, errOut, err := p.login("qsub", args...)
		s.end = time.Now()
		if err != nil {
			s.err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(errOut))
		} else {
			s.id = strings.TrimSpace(out)
		}
		p.mu.Lock()
		p.subs = append(p.subs, s)
		if s.id != "" {
			p.acked[s.id]++
			if gpu {
				p.gpu[s.id] = true
			}
		}
		p.mu.Unlock()
	}
}

// nextAck is how long after at the first qsub sent after at was
// acknowledged (false: none yet).
func (p *prodCluster) nextAck(at time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best time.Duration
	ok := false
	for _, s := range p.subs {
		if s.id != "" && !s.start.Before(at) && (!ok || s.end.Sub(at) < best) {
			best, ok = s.end.Sub(at), true
		}
	}
	return best, ok
}

func (p *prodCluster) waitNextAck(at time.Time) time.Duration {
	p.t.Helper()
	var d time.Duration
	p.eventually(60*time.Second, func() (bool, string) {
		var ok bool
		d, ok = p.nextAck(at)
		return ok, "no qsub acknowledged since the event"
	})
	return d
}

// nodeUpRE: a controller's line saying a node said hello.
var nodeUpRE = regexp.MustCompile(`(ctl\d) sharqctld: .*msg="node up" node=`)

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestHAProduction (issue 28 item 6): a stream of submissions from the
// login host over TCP with TLS and MUNGE while the leader is killed with
// SIGKILL five times, then paused past its TTL, then the etcd member on
// the leader's host is killed: no acknowledged job is missing from the
// spool, no job's container starts twice, no qsub fails.
func TestHAProduction(t *testing.T) {
	p := newProdCluster(t)
	l := p.waitLeader(-1, 30*time.Second)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go p.stream(stop, i < 2, &wg)
	}
	began := time.Now()
	var took []time.Duration
	for round := 0; round < haKills; round++ {
		time.Sleep(time.Second)
		p.ctls[l].Process.Signal(syscall.SIGKILL)
		<-p.ctlDone[l]
		killed := time.Now()
		p.startCtl(l) // systemd restarts it: now a candidate
		took = append(took, p.waitNextAck(killed))
		l = p.waitLeader(-1, 30*time.Second)
	}

	// SIGSTOP past the TTL: another controller leads; the woken one stops.
	time.Sleep(time.Second)
	paused := l
	p.ctls[paused].Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	l = p.waitLeader(paused, 30*time.Second)
	pauseAck := p.waitNextAck(stopped)
	time.Sleep(prodTTL)
	p.ctls[paused].Process.Signal(syscall.SIGCONT)
	p.eventually(30*time.Second, func() (bool, string) { return !p.ctlAlive(paused), "still running after SIGCONT" })
	p.startCtl(paused)

	// The etcd member on the leader's host: the leader stays.
	time.Sleep(time.Second)
	kill9(p.members[l])
	memberKilled := time.Now()
	etcdAck := p.waitNextAck(memberKilled)
	time.Sleep(3 * time.Second)
	if now := p.leaderIndex(); now != l {
		t.Errorf("the leader changed from %s to %d when its host's etcd member was killed", p.ctlHosts[l], now)
	}
	p.startMember(l)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	elapsed := time.Since(began)

	// Every container job ends.
	p.mu.Lock()
	subs := slices.Clone(p.subs)
	p.mu.Unlock()
	var errs []string
	for _, s := range subs {
		if s.err != "" {
			errs = append(errs, s.err)
		}
	}
	if len(errs) > 0 {
		t.Errorf("%d of %d qsub from the login host failed:\n%s", len(errs), len(subs), strings.Join(errs, "\n"))
	}
	p.eventually(90*time.Second, func() (bool, string) {
		out, errOut, err := p.login("qstat")
		if err != nil {
			return false, errOut
		}
		busy := 0
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 4 && (f[4] == "Q" || f[4] == "R") {
				busy++
			}
		}
		return busy == 0, out
	})

	// No acknowledged job lost.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := etcdspool.Open(ctx, p.etcd, etcdspool.Options{Prefix: "/sharq/" + prodName + "/spool/"})
	must(t, err)
	stored := map[string]bool{}
	must(t, sp.Scan(ctx, func(r spool.Record) error { stored[r.ID] = true; return nil }))
	p.mu.Lock()
	for id, n := range p.acked {
		if !stored[id] {
			t.Errorf("acknowledged job %s is not in the spool", id)
		}
		if n > 1 {
			t.Errorf("job id %s acknowledged %d times", id, n)
		}
	}
	acked, gpu := len(p.acked), maps.Clone(p.gpu)
	p.mu.Unlock()

	// No job's container started twice, in any run; each exited once.
	starts, exits := map[string]int{}, map[string]int{}
	for _, m := range startedRE.FindAllStringSubmatch(p.logs.String(), -1) {
		starts[m[1]]++
	}
	for _, m := range exitedRE.FindAllStringSubmatch(p.logs.String(), -1) {
		exits[m[1]]++
	}
	for id := range gpu {
		if starts[id] == 0 {
			t.Errorf("acknowledged job %s never started its container", id)
		}
	}
	for id, n := range starts {
		if n > 1 {
			t.Errorf("job %s's container started %d times", id, n)
		}
		if exits[id] != 1 {
			t.Errorf("job %s: exited %d times", id, exits[id])
		}
	}

	// The nodes spoke mutual TLS with more than one controller, each
	// checked by its own name (issue 28: a node that could verify only
	// one controller lost its exits at a failover).
	logs := p.logs.String()
	if strings.Contains(logs, "x509:") {
		t.Errorf("a certificate was refused:\n%s", grepLines(logs, "x509:"))
	}
	servedBy := map[string]bool{}
	for _, m := range nodeUpRE.FindAllStringSubmatch(logs, -1) {
		servedBy[m[1]] = true
	}
	if len(servedBy) < 2 {
		t.Errorf("nodes came up on %d controllers, want every leader of the run", len(servedBy))
	}

	slices.Sort(took)
	q := func(f float64) time.Duration {
		return took[min(len(took)-1, int(f*float64(len(took))))].Round(time.Millisecond)
	}
	t.Logf("%d qsub in %v (%.1f/s), %d errors, %d acknowledged (%d running a container), %d in the spool, %d containers started, nodes served by %d controllers",
		len(subs), elapsed.Round(time.Second), float64(len(subs))/elapsed.Seconds(), len(errs), acked, len(gpu), len(stored), len(starts), len(servedBy))
	t.Logf("SIGKILL of the leader to the next acknowledged qsub (%d kills, TTL %v): p50 %v, p99 %v, max %v; SIGSTOP: %v "+
		"(a qsub whose first server is the paused leader waits a third of SHARQ_SERVER_TIMEOUT there); the leader's etcd member killed: %v",
		len(took), prodTTL, q(0.5), q(0.99), took[len(took)-1].Round(time.Millisecond), pauseAck.Round(time.Millisecond),
		etcdAck.Round(time.Millisecond))
}
