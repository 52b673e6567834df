// Package pgtest runs a private PostgreSQL cluster for tests: initdb into
// a new directory, a server that listens on a Unix socket in that directory
// only (no TCP), run as an unprivileged user when the test runs as root
// (PostgreSQL refuses root), and stopped and removed by Stop. It uses
// Debian's PostgreSQL (the postgresql-15 package; contrib/local/install-deps.sh
// installs it).
package pgtest
