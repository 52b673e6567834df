package spool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "spool")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, FileName), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got&^c.mode != 0 {
			t.Errorf("%s mode %v, want at most %v", c.path, got, c.mode)
		}
	}
	if s.Path() != filepath.Join(dir, FileName) || s.Dir() != dir {
		t.Errorf("Path %q Dir %q", s.Path(), s.Dir())
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file, so a second Open in this process conflicts
	// just as a second controller would.
	s2, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the spool", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func TestOpenBadPath(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(file, Options{}); err == nil {
		s.Close()
		t.Fatal("Open on a regular file succeeded")
	}
}

// writeRaw prepares a bbolt file by hand.
func writeRaw(t *testing.T, dir string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSchema(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(tx *bolt.Tx) error
		want    error // nil: opens
		msg     string
	}{
		{"newer schema", func(tx *bolt.Tx) error {
			if err := initSchema(tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keySchema, u64(schemaVersion+1))
		}, ErrSchema, "newer"},
		{"schema zero", func(tx *bolt.Tx) error {
			if err := initSchema(tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keySchema, u64(0))
		}, ErrSchema, "invalid"},
		{"foreign bbolt file", func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte("something else"))
			return err
		}, ErrSchema, "not a sharq spool"},
		{"missing counter", func(tx *bolt.Tx) error {
			if err := initSchema(tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Delete(keyNext)
		}, ErrCorrupt, "incomplete"},
		{"current schema", initSchema, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRaw(t, dir, tc.prepare)
			s, err := Open(dir, Options{})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want %v", tc.want)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Open: %v; want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestCorruptRecord(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, Record{ID: "1.lab", Data: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	writeRaw(t, dir, func(tx *bolt.Tx) error {
		k, _ := SortKey("2.lab")
		return tx.Bucket(bucketJobs).Put(k, []byte{9, 9})
	})
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "2.lab"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "2.lab") {
		t.Errorf("Get corrupt: %v; want ErrCorrupt naming 2.lab", err)
	}
	if err := s.Scan(ctx, func(Record) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Scan over corrupt: %v; want ErrCorrupt", err)
	}
	if _, err := s.Get(ctx, "1.lab"); err != nil {
		t.Errorf("Get of a sound record next to a corrupt one: %v", err)
	}
	// A corrupt record can be replaced and deleted, and leaves no stale
	// index entry behind that a Purge would follow.
	fin := time.Unix(1000, 0)
	if err := s.Put(ctx, Record{ID: "3.lab", Finished: fin}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	writeRaw(t, dir, func(tx *bolt.Tx) error {
		k, _ := SortKey("3.lab")
		return tx.Bucket(bucketJobs).Put(k, []byte{1, 7})
	})
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, Record{ID: "2.lab", Data: []byte("new")}, Record{ID: "3.lab", Data: []byte("active")}); err != nil {
		t.Fatalf("Put over corrupt records: %v", err)
	}
	if n, err := s.Purge(ctx, fin.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("Purge = %d, %v: stale index entry of the replaced record", n, err)
	}
	if r, err := s.Get(ctx, "3.lab"); err != nil || string(r.Data) != "active" {
		t.Fatalf("Get(3.lab) = %+v, %v", r, err)
	}
	s.Close()
	writeRaw(t, dir, func(tx *bolt.Tx) error {
		k, _ := SortKey("2.lab")
		return tx.Bucket(bucketJobs).Put(k, nil)
	})
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Delete(ctx, "2.lab"); err != nil {
		t.Fatalf("Delete of corrupt record: %v", err)
	}
	if err := s.Scan(ctx, func(Record) error { return nil }); err != nil {
		t.Fatalf("Scan after replacing corrupt records: %v", err)
	}
}
