package acct_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"

	_ "modernc.org/sqlite"
)

var writeTestdata = flag.Bool("write-testdata", false, "write testdata/history-v*.db from the .sql scripts")

// TestWriteOldDatabases regenerates the checked-in old SQLite databases
// (only with -write-testdata; otherwise it checks they are there).
func TestWriteOldDatabases(t *testing.T) {
	for _, v := range []string{"v1"} {
		db := filepath.Join("testdata", "history-"+v+".db")
		if !*writeTestdata {
			if _, err := os.Stat(db); err != nil {
				t.Fatalf("%s missing (run with -args -write-testdata): %v", db, err)
			}
			continue
		}
		script, err := os.ReadFile(filepath.Join("testdata", "history-"+v+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(db)
		h, err := sql.Open("sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Exec(string(script)); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Exec("VACUUM"); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
}

type versioned interface {
	acct.Store
	Version(context.Context) (int, error)
}

// checkMigrated checks a v1 database after Open brought it up to date.
func checkMigrated(t *testing.T, s versioned) {
	t.Helper()
	ctx := context.Background()
	if v, err := s.Version(ctx); err != nil || v != acct.SchemaVersion {
		t.Fatalf("version after open: %d, %v; want %d", v, err, acct.SchemaVersion)
	}
	old, err := s.Jobs(ctx, acct.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]acct.Record{}
	for _, r := range old {
		byID[r.ID] = r
	}
	cases := []struct {
		id       string
		user     string
		outcome  acct.Outcome
		exit     *int
		owned    float64
		allocs   int
		indices  string
		eligible time.Time
	}{
		{"1.lab", "alice", acct.Completed, intp(0), 7200, 1, "", time.Time{}},
		{"2.lab", "bob", acct.Failed, intp(271), 2000, 1, "", time.Time{}},
		{"3[].lab", "alice", acct.Deleted, nil, 0, 0, "0-1", time.Time{}},
	}
	for i, c := range cases {
		r, ok := byID[c.id]
		if !ok || r.User != c.user || r.Outcome != c.outcome || r.OwnedGPUSeconds != c.owned ||
			len(r.Allocs) != c.allocs || r.ArrayIndices != c.indices || !r.Eligible.Equal(c.eligible) ||
			r.GraceGPUSeconds != 0 || (r.ExitStatus == nil) != (c.exit == nil) || (c.exit != nil && *r.ExitStatus != *c.exit) {
			t.Errorf("old record %d: %+v, want %+v", i, r, c)
		}
	}
	if got := byID["2.lab"].Allocs[0]; got.Node != "gpu01" || len(got.GPUs) != 4 || got.GPUs[3] != 5 {
		t.Errorf("old allocation: %+v", got)
	}
	// Migration 2 filled the hourly sums from the old rows.
	if _, ok := byID["4.lab"]; !ok {
		a := byID["1.lab"]
		u, err := s.Usage(ctx, acct.UsageQuery{Start: a.Submit.Add(-time.Hour), End: a.End.Add(5 * time.Hour), By: acct.ByUser})
		if err != nil || len(u) != 2 || u[0].Key != "alice" || u[0].Owned != 2 || u[0].Jobs != 1 || u[1].Borrowed != 2000.0/3600 {
			t.Fatalf("usage from the migrated sums: %+v, %v", u, err)
		}
	}
	// The new columns and table work.
	r := byID["1.lab"]
	r.ID, r.Eligible, r.GraceGPUSeconds = "4.lab", r.Submit.Add(time.Second), 5
	if err := s.Record(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Jobs(ctx, acct.JobFilter{ID: "4.lab"})
	if err != nil || len(got) != 1 || got[0].GraceGPUSeconds != 5 || !got[0].Eligible.Equal(r.Eligible) {
		t.Fatalf("new record in a migrated database: %+v, %v", got, err)
	}
	if err := s.Sample(ctx, acct.ShareSample{Time: r.End, Seconds: 60, Share: "vision", Partition: "gpu", Quota: 4, InUse: 2}); err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage(ctx, acct.UsageQuery{Start: r.Submit.Add(-time.Hour), End: r.End.Add(time.Hour), By: acct.ByShare})
	if err != nil || len(u) != 2 {
		t.Fatalf("usage on a migrated database: %+v, %v", u, err)
	}
}

func intp(v int) *int { return &v }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteMigratesV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	copyFile(t, "testdata/history-v1.db", path)
	s, err := acct.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkMigrated(t, s)
	// Opening again finds it current.
	s.Close()
	if s, err = acct.OpenSQLite(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	checkMigrated(t, s)
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := acct.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	h, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Exec(`UPDATE sharq_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := acct.OpenSQLite(context.Background(), path); !errors.Is(err, acct.ErrSchema) {
		t.Fatalf("open of a newer schema: %v, want ErrSchema", err)
	}
}

func TestSQLiteFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := acct.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v, want 0600 (it holds every user's jobs)", st.Mode().Perm())
	}
}

// openV2 makes a database of schema version 2 (testdata/history-v2.sql, the
// DDL as version 2 created it) on the backend, then opens it with Open,
// which migrates it to SchemaVersion.
func openV2(t *testing.T, backend, dsn string) versioned {
	t.Helper()
	script, err := os.ReadFile("testdata/history-v2.sql")
	if err != nil {
		t.Fatal(err)
	}
	driver := "sqlite"
	if backend == "postgres" {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var s versioned
	if backend == "postgres" {
		s, err = acct.OpenPostgres(context.Background(), dsn)
	} else {
		s, err = acct.OpenSQLite(context.Background(), dsn)
	}
	if err != nil {
		t.Fatalf("open a version 2 database: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSQLiteMigratesV2: checkMigratesV2 on SQLite (TestPostgresMigratesV2
// on PostgreSQL).
func TestSQLiteMigratesV2(t *testing.T) {
	checkMigratesV2(t, "sqlite", filepath.Join(t.TempDir(), "history.db"))
}

// checkMigratesV2: a database of schema version 2 (before Record.Detail)
// opens in place: its rows read back with an empty Detail, their
// accounting unchanged, and a new record's Detail round-trips.
func checkMigratesV2(t *testing.T, backend, dsn string) {
	ctx := context.Background()
	s := openV2(t, backend, dsn)
	if v, err := s.Version(ctx); err != nil || v != acct.SchemaVersion || v != 4 {
		t.Fatalf("version after open: %d, %v; want %d", v, err, acct.SchemaVersion)
	}
	old, err := s.Jobs(ctx, acct.JobFilter{Detail: true})
	if err != nil || len(old) != 2 {
		t.Fatalf("old rows: %+v, %v", old, err)
	}
	alice := old[0]
	if alice.ID != "1.lab" || alice.User != "alice" || alice.OwnedGPUSeconds != 7200 || alice.GraceGPUSeconds != 30 ||
		alice.Eligible.UnixMilli() != 1772323201000 || len(alice.Allocs) != 1 || alice.Outcome != acct.Completed ||
		old[1].ID != "2[].lab" || old[1].ArrayIndices != "0-1" || old[1].ExitStatus != nil {
		t.Errorf("old rows changed: %+v", old)
	}
	for _, r := range old {
		if !reflect.DeepEqual(r.Detail, acct.Detail{}) {
			t.Errorf("old row %s: detail %+v, want none", r.ID, r.Detail)
		}
	}
	// A new record with its detail, and an old one recorded again.
	r := alice
	r.ID, r.Seq = "3.lab", 3
	r.Detail = acct.Detail{Script: "#!/bin/sh\necho hi\n", Env: map[string]string{"K": "v"},
		Deps:   []acct.Dep{{Type: "afterok", On: "1.lab"}},
		Events: []acct.Event{{Time: r.Submit, State: "Q", What: "submitted"}}, WorkDir: "/home/alice"}
	again := alice
	again.Detail.Script = "#!/bin/sh\n"
	if err := s.Record(ctx, r, again); err != nil {
		t.Fatal(err)
	}
	for _, want := range []acct.Record{r, again} {
		got, err := s.Jobs(ctx, acct.JobFilter{ID: want.ID, Detail: true})
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("record in a migrated database:\n got %+v, %v\nwant %+v", got, err, want)
		}
	}
	// The hourly sums stayed right: alice's job replaced, not added.
	u, err := s.Usage(ctx, acct.UsageQuery{Start: alice.Submit.Add(-time.Hour), End: alice.End.Add(5 * time.Hour), By: acct.ByUser})
	if err != nil || len(u) != 1 || u[0].Key != "alice" || u[0].Jobs != 2 || u[0].Owned != 4 || u[0].Grace != 60.0/3600 {
		t.Errorf("usage after migration: %+v, %v", u, err)
	}
}
