//go:build !unit

package acct_test

import (
	"context"
	"fmt"
	"os"
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
