package conns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const childEnv = "CONNS_TEST_CHILD_SOCKET"

// serveChild is the child process of TestServeSurvivesEMFILE: it serves a
// Unix socket with only 32 file descriptors.
func serveChild(sock string) {
	lim := syscall.Rlimit{Cur: 32, Max: 32}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(2)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err = Serve(context.Background(), l, "test", log, func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		io.WriteString(c, "ok\n")
		io.Copy(io.Discard, r)
	})
	fmt.Println("serve ended:", err)
	os.Exit(1)
}

func TestMain(m *testing.M) {
	if sock := os.Getenv(childEnv); sock != "" {
		serveChild(sock)
	}
	os.Exit(m.Run())
}

// TestServeSurvivesEMFILE: a server out of file descriptors (a flood of
// idle connections) keeps serving once they close, instead of stopping.
func TestServeSurvivesEMFILE(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+sock)
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	sawEMFILE := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "too many open files") {
				once = true
				close(sawEMFILE)
			}
		}
	}()
	go func() { exited <- cmd.Wait() }()
	var flood []net.Conn
	for range 64 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	select {
	case <-sawEMFILE:
	case err := <-exited:
		t.Fatalf("child exited: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the child never ran out of file descriptors")
	}
	for _, c := range flood {
		c.Close()
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "hello\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "ok\n" {
		rest, _ := io.ReadAll(out)
		t.Fatalf("after the flood: %q %v (child said %q)", line, err, rest)
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"EMFILE", &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, true},
		{"ENFILE", &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{"aborted", &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}, true},
		{"closed", net.ErrClosed, false},
		{"other", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Transient(tt.err); got != tt.want {
				t.Fatalf("Transient(%v) = %v", tt.err, got)
			}
		})
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter("connections of uid", 2)
	r1, err1 := l.Acquire("1000")
	r2, err2 := l.Acquire("1000")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	_, err := l.Acquire("1000")
	var el *ErrLimit
	if !errors.As(err, &el) || el.Max != 2 || !strings.Contains(err.Error(), "uid 1000") {
		t.Fatalf("third Acquire: %v", err)
	}
	if _, err := l.Acquire("1001"); err != nil {
		t.Fatalf("another key: %v", err)
	}
	r1()
	r1() // twice: gives back one slot only
	if l.Held("1000") != 1 {
		t.Fatalf("held %d after one release", l.Held("1000"))
	}
	if _, err := l.Acquire("1000"); err != nil {
		t.Fatalf("after release: %v", err)
	}
	r2()
}

// TestServeInJoinsHandlers: after ServeIn has returned (ctx ended), the
// group's Wait returns only once every handler it started has returned,
// however late a handler notices the end.
func TestServeInJoinsHandlers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var handlers sync.WaitGroup
	var started, ended atomic.Int32
	const n = 4
	accepted := make(chan struct{}, n)
	served := make(chan error, 1)
	go func() {
		served <- ServeIn(ctx, l, "test", nil, &handlers, func(c net.Conn) {
			defer c.Close()
			started.Add(1)
			accepted <- struct{}{}
			<-ctx.Done()
			for range 1000 { // a handler that takes its time to wind up
				runtime.Gosched()
			}
			ended.Add(1)
		})
	}()
	for range n {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for range n {
		<-accepted
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("ServeIn: %v", err)
	}
	handlers.Wait()
	if s, e := started.Load(), ended.Load(); s != n || e != n {
		t.Fatalf("after Wait: %d handlers started, %d ended; want %d and %d", s, e, n, n)
	}
}
