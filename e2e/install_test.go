//go:build !unit

package e2e

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall installs into a temporary DESTDIR as a packager does
// (make install PREFIX=/usr DESTDIR=...) and checks the layout: the
// daemons in sbin, every other command but sharq-up in bin, every page of
// man/ gzipped in its section, which man renders without a warning and
// finds by name through MANPATH, bash completion that bash-completion
// loads under each command's name, and systemd units pointing into PREFIX.
func TestMakeInstall(t *testing.T) {
	for _, tool := range []string{"make", "man", "groff", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (contrib/local/install-deps.sh --test installs man-db and groff-base): %v", tool, err)
		}
	}
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "dest")
	install := exec.Command("make", "-C", "..", "install", "PREFIX=/usr", "DESTDIR="+dest, "BIN="+filepath.Join(tmp, "bin"))
	install.Env = append(os.Environ(), "PATH=/usr/local/go/bin:"+os.Getenv("PATH"))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	usr := filepath.Join(dest, "usr")
	if left, _ := filepath.Glob(filepath.Join(dest, "*")); len(left) != 1 || left[0] != usr {
		t.Errorf("installed outside DESTDIR/usr: %v", left)
	}

	cmds, err := os.ReadDir("../cmd")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		name := c.Name()
		dir := "bin"
		switch name {
		case "sharqctld", "sharqd":
			dir = "sbin"
		case "sharq-up":
			if _, err := os.Stat(filepath.Join(usr, "bin", name)); err == nil {
				t.Errorf("sharq-up (a development tool) was installed")
			}
			continue
		}
		p := filepath.Join(usr, dir, name)
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v, mode %v", p, err, fi)
			continue
		}
		if out, err := exec.Command(p, "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), name) {
			t.Errorf("%s --help: %v\n%s", p, err, out)
		}
	}

	pages, err := filepath.Glob("../man/*.[158]")
	if err != nil || len(pages) < 10 {
		t.Fatalf("man/ holds %d pages: %v", len(pages), err)
	}
	manDir := filepath.Join(usr, "share", "man")
	for _, src := range pages {
		name := filepath.Base(src)
		sec := name[strings.LastIndexByte(name, '.')+1:]
		gz := filepath.Join(manDir, "man"+sec, name+".gz")
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := gunzip(t, gz); got != string(want) {
			t.Errorf("%s is not man/%s gzipped", gz, name)
			continue
		}
		cmd := exec.Command("man", "--warnings", "-l", gz)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 || !strings.Contains(string(out), "NAME") {
			t.Errorf("man -l %s: %v, warnings:\n%s", name, err, stderr.String())
		}
	}
	// man finds each kind of page by name, as a user types it.
	for _, q := range []struct{ args, want string }{
		{"qsub", "qsub - submit a batch job"},
		{"5 sharq.toml", "sharq.toml - the sharq cluster configuration file"},
		{"sharqctld", "sharqctld - the sharq controller"},
	} {
		cmd := exec.Command("man", strings.Fields(q.args)...)
		cmd.Env = append(os.Environ(), "MANPATH="+manDir, "MANWIDTH=200", "LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(strings.Join(strings.Fields(string(out)), " "), q.want) {
			t.Errorf("MANPATH=%s man %s: %v\n%.500s", manDir, q.args, err, out)
		}
	}

	// bash-completion loads completions/NAME when NAME is first completed.
	comp := filepath.Join(usr, "share", "bash-completion", "completions")
	for _, c := range []string{"qsub", "qstat", "qdel", "sharqctl", "pbsnodes"} {
		out, err := exec.Command("bash", "-c", "source "+filepath.Join(comp, c)+" && complete -p "+c).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "complete -F _sharq_") {
			t.Errorf("completion for %s: %v\n%s", c, err, out)
		}
	}

	units := filepath.Join(usr, "lib", "systemd", "system")
	for unit, exec := range map[string]string{
		"sharqctld.service":  "ExecStart=/usr/sbin/sharqctld ",
		"sharqd.service":     "ExecStart=/usr/sbin/sharqd ",
		"sharq-etcd.service": "ExecStart=/usr/bin/etcd ",
	} {
		b, err := os.ReadFile(filepath.Join(units, unit))
		if err != nil {
			t.Error(err)
			continue
		}
		if s := string(b); !strings.Contains(s, exec) || strings.Contains(s, "/usr/local/") {
			t.Errorf("%s does not run %q under PREFIX:\n%s", unit, exec, s)
		}
	}
	if _, err := os.Stat(filepath.Join(usr, "share", "doc", "sharq", "cluster.toml")); err != nil {
		t.Error(err)
	}
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer f.Close()
	r, err := gzip.NewReader(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return ""
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return string(b)
}
