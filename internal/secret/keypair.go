package secret

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"syscall"
)

// maxPEM bounds a certificate or key file.
const maxPEM = 1 << 20

// KeyPair loads a TLS certificate and its private key (cluster.tls_cert and
// tls_key) as tls.LoadX509KeyPair does, after checking the key file as the
// secret file is checked, with PostgreSQL's rule for keys: a regular file
// owned by root or by the daemon's own user, with no access for other
// users; a root-owned key may be readable by its group (mode 0640, as
// Debian's ssl-cert group), nothing more. Whoever reads a node's key can
// connect to the controller as that node (and receive every job's start
// order, environments and scripts included), or the controller's, serve
// clients and nodes as the controller: a key other users could read is
// refused, not used.
func KeyPair(certFile, keyFile string) (tls.Certificate, error) {
	key, err := readKey(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := readLimited(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls key pair %s, %s: %w", certFile, keyFile, err)
	}
	return pair, nil
}

// readKey reads a private key file after the owner and mode checks.
func readKey(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no tls_key configured", ErrFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: tls key: %w", ErrFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: tls key: %w", ErrFile, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: tls key %s is not a regular file", ErrFile, path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("%w: tls key %s: cannot read its owner", ErrFile, path)
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%w: tls key %s is owned by uid %d, not root or this daemon's user", ErrFile, path, st.Uid)
	}
	allowed := os.FileMode(0o600)
	if st.Uid == 0 {
		allowed = 0o640
	}
	if perm := fi.Mode().Perm(); perm&^allowed != 0 {
		return nil, fmt.Errorf("%w: tls key %s has mode %#o; other users must have no access (chmod 600, or 640 for a root-owned key read by a group)", ErrFile, path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("%w: tls key %s: %w", ErrFile, path, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%w: tls key %s is larger than %d bytes", ErrFile, path, maxPEM)
	}
	return b, nil
}

// readLimited reads a file of at most maxPEM bytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPEM)
	}
	return b, nil
}
