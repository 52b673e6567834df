package conf

import (
	"net/url"
	"path/filepath"
	"strings"
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
	// DSN is the PostgreSQL connection string. A password is refused
	// (dsnPassword): every user reads the configuration (sharqctl show
	// config); it belongs in a passfile (PGPASSFILE, passfile=...).
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
	if dsnPassword(a.DSN) {
		t.errf("dsn", "dsn holds a password, which every user would read (sharqctl show config shows the configuration to all): put it in a passfile (PGPASSFILE, or passfile=PATH in dsn, mode 0600) or use peer or certificate authentication")
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
	t.unknown(keys["accounting"]...)
	return a
}

// dsnPassword says whether a PostgreSQL connection string holds a
// password: a URL's user information (postgres://u:pw@host/db) or its
// password parameter, or a key/value string's password key (libpq's
// syntax: key = value, a value quoted with ' and \ escapes or bare).
func dsnPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// Unparsable: look for the parts a password would be in.
			rest, _, _ := strings.Cut(strings.SplitN(dsn, "://", 2)[1], "/")
			userinfo, _, at := strings.Cut(rest, "@")
			return (at && strings.Contains(userinfo, ":")) || strings.Contains(dsn, "password=")
		}
		if _, ok := u.User.Password(); ok {
			return true
		}
		return u.Query().Has("password")
	}
	s := dsn
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		if s == "" {
			return false
		}
		i := strings.IndexAny(s, "= \t\n\r\f\v")
		if i < 0 {
			return false // a key without a value: not a connection string
		}
		key := s[:i]
		s = strings.TrimLeft(s[i:], " \t\n\r\f\v")
		if !strings.HasPrefix(s, "=") {
			return false
		}
		if key == "password" {
			return true
		}
		s = strings.TrimLeft(s[1:], " \t\n\r\f\v")
		if strings.HasPrefix(s, "'") {
			j := 1
			for j < len(s) && s[j] != '\'' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			s = s[min(j+1, len(s)):]
			continue
		}
		if j := strings.IndexAny(s, " \t\n\r\f\v"); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	}
}
