package noded

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestEpochs(t *testing.T) {
	dir := t.TempDir()
	e, err := loadEpochs(dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		epoch   int64
		observe bool // a welcome (observe) or an order (check)
		stale   bool
	}{
		{"single controller", 0, true, false},
		{"first leader", 7, true, false},
		{"its orders", 7, false, false},
		{"order of an older leader", 6, false, true},
		{"welcome of an older leader", 3, true, true},
		{"bbolt controller after HA", 0, true, true},
		{"next leader", 12, true, false},
		{"late order of the first leader", 7, false, true},
	}
	for _, s := range steps {
		var err error
		if s.observe {
			err = e.observe(s.epoch)
		} else {
			err = e.check(s.epoch)
		}
		if got := errors.Is(err, ErrStaleEpoch); got != s.stale || (err != nil && !got) {
			t.Fatalf("%s: epoch %d: err = %v, want stale %v", s.name, s.epoch, err, s.stale)
		}
	}
	// The highest epoch survives a restart.
	e2, err := loadEpochs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.check(11); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("after restart, epoch 11 passes: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, epochFile), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadEpochs(dir); err == nil {
		t.Fatal("a corrupt epoch file loads")
	}
}

func TestRotateDial(t *testing.T) {
	var ls []net.Listener
	var addrs []string
	for i := 0; i < 3; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var d net.Dialer
	r := &rotation{addrs: addrs, dial: d.DialContext}
	dial := r.Dial
	got := func() string {
		c, err := dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.RemoteAddr().String()
	}
	for i, want := range []string{addrs[0], addrs[1], addrs[2], addrs[0]} {
		if g := got(); g != want {
			t.Fatalf("dial %d reached %s, want %s", i, g, want)
		}
	}
	// A follower's answer names the leader: the next dial goes there, then
	// the rotation goes on after it. An address not configured is ignored.
	if !r.prefer(addrs[2]) || r.prefer("127.0.0.1:1") {
		t.Fatal("prefer: a configured address refused, or another accepted")
	}
	for i, want := range []string{addrs[2], addrs[0]} {
		if g := got(); g != want {
			t.Fatalf("after prefer: dial %d reached %s, want %s", i, g, want)
		}
	}
	// A controller that is gone is skipped.
	ls[1].Close()
	for i, want := range []string{addrs[2], addrs[0], addrs[2]} {
		if g := got(); g != want {
			t.Fatalf("with %s gone: dial %d reached %s, want %s", addrs[1], i, g, want)
		}
	}
	ls[0].Close()
	ls[2].Close()
	if _, err := dial(context.Background()); err == nil {
		t.Fatal("dial succeeded with every controller gone")
	}
}
