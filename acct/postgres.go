package acct

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Postgres is the history store in a PostgreSQL database, for sites that
// run several controllers or want SQL over their history.
type Postgres struct {
	sqlStore
}

// migrationLock serializes controllers migrating the same database.
const migrationLock = `SELECT pg_advisory_xact_lock(7365762)` // "sharq" history

// OpenPostgres connects with a libpq-style connection string or URL
// ("host=/run/postgresql dbname=sharq", "postgres://sharq@db/sharq";
// passwords belong in a PGPASSFILE, not in the configuration) and brings
// the schema up to date.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("history postgres: %w", err)
	}
	where := fmt.Sprintf("postgres %s/%s", cfg.Host, cfg.Database)
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	s := &Postgres{sqlStore: sqlStore{db: db, where: where, d: dialect{name: "postgres", numbered: true, lock: migrationLock}}}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Version is the database's schema version.
func (s *Postgres) Version(ctx context.Context) (int, error) { return s.version(ctx) }

// DB is the connection pool (tests).
func (s *Postgres) DB() *sql.DB { return s.db }
