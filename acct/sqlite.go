package acct

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// SQLite is the embedded history store: one SQLite file (in WAL mode,
// synchronous writes), readable by its owner only.
type SQLite struct {
	sqlStore
	path string
}

// OpenSQLite opens (creating it, mode 0600, and its directory, 0700, when
// missing) the history database at path and brings its schema up to date.
// Its default place is spool_dir, which a controller whose spool is etcd
// never makes itself.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	f.Close()
	v := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		v.Add("_pragma", p)
	}
	v.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+v.Encode())
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	// One writer at a time is SQLite's rule; a few readers may run beside it.
	db.SetMaxOpenConns(4)
	s := &SQLite{sqlStore: sqlStore{db: db, where: path, d: dialect{name: "sqlite"}}, path: path}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Version is the database's schema version.
func (s *SQLite) Version(ctx context.Context) (int, error) { return s.version(ctx) }
