//go:build !unit

package acct_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/sharq-hpc/sharq/acct"

	_ "modernc.org/sqlite"
)

func TestPostgresMigratesV1(t *testing.T) {
	dsn := newPGDB(t)
	script, err := os.ReadFile("testdata/history-v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := acct.OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkMigrated(t, s)
}

// TestPostgresMigratesV2: checkMigratesV2 on PostgreSQL.
func TestPostgresMigratesV2(t *testing.T) {
	checkMigratesV2(t, "postgres", newPGDB(t))
}
