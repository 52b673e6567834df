package conf

import (
	"path/filepath"
	"time"
)

// History backends ([accounting] backend).
const (
	HistorySQLite   = "sqlite"   // one file, by default spool_dir/history.db
	HistoryPostgres = "postgres" // a PostgreSQL database (dsn)
	HistoryOff      = "off"      // no job history
)

// Accounting is the [accounting] table: the job history behind
// `sharqctl report` and `qstat -x` for jobs that left the spool.
type Accounting struct {
	Backend string
	Path    string // SQLite file
	// DSN is the PostgreSQL connection string; a password belongs in a
	// PGPASSFILE, not here.
	DSN string
	// Retention is how long records are kept.
	Retention time.Duration
	// UsersSeeAll lets every user read every job's history and the whole
	// usage report (as PBS shows all jobs); by default a user sees only
	// their own.
	UsersSeeAll bool
	// SampleInterval is how often the shares' standing is sampled for the
	// usage reports and plots.
	SampleInterval time.Duration
}

// Defaults of the [accounting] table.
const (
	DefaultHistoryFile    = "history.db"
	DefaultRetention      = 365 * 24 * time.Hour
	DefaultSampleInterval = time.Minute
)

// accounting reads the [accounting] table (t may be nil: all defaults).
func (l *loader) accounting(t *table, spoolDir string) Accounting {
	a := Accounting{Backend: HistorySQLite, Path: filepath.Join(spoolDir, DefaultHistoryFile),
		Retention: DefaultRetention, SampleInterval: DefaultSampleInterval}
	if t == nil {
		return a
	}
	if b, ok := t.str("backend"); ok {
		switch b {
		case HistorySQLite, HistoryPostgres, HistoryOff:
			a.Backend = b
		default:
			t.errf("backend", "%q is not a history backend (want %q, %q or %q)", b, HistorySQLite, HistoryPostgres, HistoryOff)
		}
	}
	a.Path = t.absPath("path", a.Path)
	a.DSN = t.strDefault("dsn", "")
	if a.Backend == HistoryPostgres && a.DSN == "" {
		t.errAt("backend", "backend %q needs dsn (a PostgreSQL connection string)", HistoryPostgres)
	}
	if a.Backend != HistoryPostgres && a.DSN != "" {
		t.errf("dsn", "dsn is only used with backend = %q", HistoryPostgres)
	}
	if d, ok := t.duration("retention", a.Retention); ok {
		a.Retention = d
		if d < time.Hour {
			t.errf("retention", "must be at least 1h")
		}
	}
	if d, ok := t.duration("sample_interval", a.SampleInterval); ok {
		a.SampleInterval = d
		if d < time.Second || d > time.Hour {
			t.errf("sample_interval", "must be from 1s to 1h")
		}
	}
	if b, ok := t.boolean("users_see_all"); ok {
		a.UsersSeeAll = b
	}
	t.unknown("backend", "path", "dsn", "retention", "sample_interval", "users_see_all")
	return a
}
