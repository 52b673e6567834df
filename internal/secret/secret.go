package secret

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// ErrFile is wrapped by every reason to refuse the secret file.
var ErrFile = errors.New("unsafe or unusable secret file")

// maxSecret bounds the secret file; a secret is a line, not a document.
const maxSecret = 4096

// Read reads the cluster's shared secret from path. The file must be
// a regular file owned by root or by this process's effective user (as a
// TLS key may be: see readKey) with no permission bits for group or other,
// so only root and the daemon's own user can read or replace it; its
// content, without surrounding white space, must not be empty. (The daemons
// run as root, so for them this is root's file; an unprivileged controller,
// such as the tests', reads its own.)
func Read(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: no secret_file configured", ErrFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrFile, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrFile, path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%w: %s: cannot read its owner", ErrFile, path)
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%w: %s is owned by uid %d, not root or this daemon's user", ErrFile, path, st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%w: %s has mode %#o; group and other must have no access (chmod 600)", ErrFile, path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrFile, path, err)
	}
	if len(b) > maxSecret {
		return "", fmt.Errorf("%w: %s is larger than %d bytes", ErrFile, path, maxSecret)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrFile, path)
	}
	return s, nil
}
