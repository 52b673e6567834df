package noded

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	s := store{dir: t.TempDir()}
	r := &jobRecord{JobID: "3[1].c", Run: 2, Started: time.Unix(100, 0).UTC(), Walltime: time.Hour, Grace: time.Second,
		StopReason: "preempted", StopGrace: 5 * time.Second, StopTime: time.Unix(200, 0).UTC(), GPUs: []int{1, 3}}
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.jobDir("junk.c"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(s.jobDir("junk.c"), recordFile), []byte("{not json"), 0o600)
	recs, err := s.loadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := recs["3[1].c"]; got == nil || !reflect.DeepEqual(*got, *r) {
		t.Errorf("loaded %+v, want %+v", got, r)
	}
	if got, ok := recs["junk.c"]; !ok || got != nil {
		t.Errorf("corrupt record: %+v %v, want a nil entry", got, ok)
	}
	if err := s.drop("3[1].c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.jobDir("3[1].c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dropped job dir still there: %v", err)
	}
	if recs, err := (store{dir: filepath.Join(t.TempDir(), "none")}).loadAll(); err != nil || len(recs) != 0 {
		t.Errorf("missing dir: %v %v", recs, err)
	}
}

func TestStoreLock(t *testing.T) {
	s := store{dir: filepath.Join(t.TempDir(), "n1")}
	unlock, err := s.lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.lock(); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := s.lock()
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}
