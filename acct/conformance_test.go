package acct_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/acct/accttest"
	"github.com/sharq-hpc/sharq/internal/pgtest"
)

// pg is the package's private PostgreSQL cluster (TestMain).
var pg *pgtest.Server

func TestMain(m *testing.M) {
	var err error
	if pg, err = pgtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "acct tests need PostgreSQL:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

var dbSeq atomic.Int64

// newPGDB creates a fresh database in the private cluster.
func newPGDB(tb testing.TB) string {
	dsn, err := pg.CreateDB(context.Background(), fmt.Sprintf("t%d", dbSeq.Add(1)))
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

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

func TestPostgresConformance(t *testing.T) {
	dsns := map[acct.Store]string{}
	accttest.Run(t, accttest.Factory{
		Open: func(t *testing.T) acct.Store {
			dsn := newPGDB(t)
			s, err := acct.OpenPostgres(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			dsns[s] = dsn
			return s
		},
		Reopen: func(t *testing.T, old acct.Store) acct.Store {
			old.Close()
			s, err := acct.OpenPostgres(context.Background(), dsns[old])
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
