package acct_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/acct/accttest"
)

func TestSQLiteConformance(t *testing.T) {
	accttest.Run(t, accttest.Factory{
		Open: func(t *testing.T) acct.Store {
			s, err := acct.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "history.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Reopen: func(t *testing.T, old acct.Store) acct.Store {
			path := old.(*acct.SQLite).Path()
			old.Close()
			s, err := acct.OpenSQLite(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}

// TestSQLiteMakesItsDirectory: the history's default place is spool_dir,
// which a controller on an etcd spool never makes; opening the history
// there makes it (0700), and the database is its owner's alone.
func TestSQLiteMakesItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool", "sub")
	s, err := acct.OpenSQLite(context.Background(), filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Join(dir, "history.db"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi.Mode(), err, want)
		}
	}
}
