package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// Server is a running private PostgreSQL cluster.
type Server struct {
	Dir    string // data directory and socket directory
	bin    string
	uid    uint32
	gid    uint32
	asUser bool
}

// ErrNotInstalled says no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL server not installed (apt-get install postgresql-15)")

// BinDir finds the server binaries: /usr/lib/postgresql/15/bin, else the
// newest version installed there.
func BinDir() (string, error) {
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/initdb"); err == nil {
		return "/usr/lib/postgresql/15/bin", nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return "", ErrNotInstalled
	}
	sort.Strings(m)
	return filepath.Dir(m[len(m)-1]), nil
}

// Start creates and starts a cluster. As root it runs the server as the
// "postgres" user (Debian's package creates it), else "nobody".
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sharq-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		name := "postgres"
		u, err := user.Lookup(name)
		if err != nil {
			if u, err = user.Lookup("nobody"); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("pgtest: no unprivileged user to run postgres as: %w", err)
			}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.uid, s.gid, s.asUser = uint32(uid), uint32(gid), true
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.cmd("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w: %s", err, out)
	}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(s.bin, name), args...)
	c.Dir = s.Dir
	c.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
	if s.asUser {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: s.uid, Gid: s.gid}}
	}
	return c
}

// DSN is the connection string for database db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.Dir, db)
}

// Stop stops the server ("fast": connections are cut) and removes its files.
func (s *Server) Stop() error {
	out, err := s.cmd("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("pgtest: pg_ctl stop: %w: %s", err, bytes.TrimSpace(out))
	}
	if rerr := os.RemoveAll(s.Dir); err == nil {
		err = rerr
	}
	return err
}

// Pause stops the server but keeps its files; Resume starts it again.
func (s *Server) Pause() error {
	if out, err := s.cmd("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Resume starts a paused server.
func (s *Server) Resume() error { return s.start() }

// start runs the server: no TCP at all, the socket in s.Dir.
func (s *Server) start() error {
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c synchronous_commit=off -c full_page_writes=off", s.Dir)
	if out, err := s.cmd("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-o", opts, "-l", filepath.Join(s.Dir, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w: %s %s", err, out, log)
	}
	return nil
}

// CreateDB creates database name and returns its connection string.
func (s *Server) CreateDB(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}
