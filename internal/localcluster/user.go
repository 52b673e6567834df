package localcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// clientCommands are the commands users run; Up copies them to
// StateDir/bin, which every user can reach (a repository under /root is
// not).
var clientCommands = []string{"qsub", "qstat", "qdel", "qhold", "qrls", "qalter", "qexec", "qselect", "pbsnodes", "qsig", "qrerun", "qmove", "qorder", "tracejob", "sharqctl"}

// profileMarker starts the lines Up adds to the demo user's ~/.profile.
const profileMarker = "# sharq local cluster (added by make up)"

// demoUser is the unprivileged user jobs are submitted as: the controller
// refuses root's jobs.
type demoUser struct {
	name     string
	uid, gid int
	home     string
	created  bool
}

// ensureUser looks the user up and creates it (useradd, with a home and a
// group of its own) when it is missing.
func ensureUser(name string) (*demoUser, error) {
	u, err := user.Lookup(name)
	created := false
	if errors.As(err, new(user.UnknownUserError)) {
		out, addErr := exec.Command("useradd", "--create-home", "--user-group", "--shell", "/bin/bash",
			"--comment", "sharq demo user (created by make up)", name).CombinedOutput()
		if addErr != nil {
			return nil, fmt.Errorf("create user %s: %w: %s", name, addErr, strings.TrimSpace(string(out)))
		}
		created = true
		u, err = user.Lookup(name)
	}
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("user %s is root: the controller refuses root's jobs; pick an ordinary user", name)
	}
	return &demoUser{name: name, uid: uid, gid: gid, home: u.HomeDir, created: created}, nil
}

// profileLines sets up a login shell of the demo user for the cluster.
func profileLines(socket, bin string) string {
	return fmt.Sprintf("\n%s\nexport SHARQ_SOCKET=%s\ncase \":$PATH:\" in *:%s:*) ;; *) PATH=%s:$PATH ;; esac\n",
		profileMarker, socket, bin, bin)
}

// setupProfile appends profileLines to the user's ~/.profile unless they
// are there already. The file stays the user's.
func (d *demoUser) setupProfile(socket, bin string) error {
	if d.home == "" {
		return nil
	}
	p := filepath.Join(d.home, ".profile")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("profile of %s: %w", d.name, err)
	}
	if strings.Contains(string(old), profileMarker) {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("profile of %s: %w", d.name, err)
	}
	defer f.Close()
	if _, err := f.WriteString(profileLines(socket, bin)); err != nil {
		return fmt.Errorf("profile of %s: %w", d.name, err)
	}
	if err := f.Chown(d.uid, d.gid); err != nil {
		return fmt.Errorf("profile of %s: %w", d.name, err)
	}
	return nil
}

// installClients copies the client commands from bin to dst (mode 0755,
// each replaced atomically, so a running qstat keeps its old file).
func installClients(bin, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("install client commands: %w", err)
	}
	for _, name := range clientCommands {
		if err := copyExecutable(filepath.Join(bin, name), filepath.Join(dst, name)); err != nil {
			return fmt.Errorf("install client commands: %w", err)
		}
	}
	return nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".new"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
