//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snakefile is a small workflow: a -> b -> c, a -> d; d fails until
// ok.flag exists. Every rule notes its run in runs.log; c runs the node's
// own Python (the host image's software), and every rule writes what it
// saw of its GPU pinning.
const snakefile = `
rule all:
    input: "c.txt", "d.txt"

rule a:
    output: "a.txt"
    shell: "cat DATA/input.txt > {output}; echo a >> runs.log; touch DATA/x 2>/dev/null || echo read-only >> {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}; echo b >> {output}; echo b >> runs.log"

rule c:
    input: "b.txt"
    output: "c.txt"
    shell: "python3 -c 'import sys; print(open(\"b.txt\").read().split(), sys.version_info[0])' > {output}; echo gpus=$CUDA_VISIBLE_DEVICES >> {output}; echo c >> runs.log"

rule d:
    input: "a.txt"
    output: "d.txt"
    shell: "echo d >> runs.log; test -e ok.flag; echo d > {output}"
`

// oneGPU matches the line rule c writes: exactly one GPU index, whichever
// the scheduler picked (rules run side by side, so it is not always 0).
var oneGPU = regexp.MustCompile(`(?m)^gpus=[0-9]+$`)

// TestSnakemake runs a Snakemake workflow in its generic cluster mode
// against a real cluster whose partition allows the host image: every rule
// is a sharq job (qsub --image host) running Debian's Snakemake from the
// node's root filesystem; the failing rule is reported failed, the others
// finish (--keep-going), and a rerun runs only what is missing.
func TestSnakemake(t *testing.T) {
	smk, err := exec.LookPath("snakemake")
	if err != nil {
		t.Fatalf("snakemake is not installed (contrib/local/install-deps.sh installs Debian's): %v", err)
	}
	// A site mount (read-only) the workflow reads its input from.
	data, err := os.MkdirTemp("", "sharq-data-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(data) })
	must(t, os.Chmod(data, 0o755))
	must(t, os.WriteFile(filepath.Join(data, "input.txt"), []byte("from the dataset\n"), 0o644))
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares,
		part: fmt.Sprintf("host_image = true\nmounts = [%q]", data+":ro")})
	// The workflow's user has no passwd entry, so that the jobs' HOME is
	// the one qsub saw (PBS_O_HOME): her directory, not a real home of
	// this machine.
	u := c.homelessUser()
	must(t, os.WriteFile(filepath.Join(u.dir, "Snakefile"), []byte(strings.ReplaceAll(snakefile, "DATA", data)), 0o644))

	first, err := u.snakemake(smk)
	if err == nil {
		t.Fatalf("first run succeeded though rule d fails:\n%s", first)
	}
	if !strings.Contains(first, "Error in rule d") {
		t.Fatalf("Snakemake did not report rule d failed:\n%s", first)
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if u.readFile(f) == "" {
			t.Errorf("%s missing after the first run:\n%s", f, first)
		}
	}
	if got := u.readFile("c.txt"); !strings.Contains(got, "['from', 'the', 'dataset', 'read-only', 'b'] 3") || !oneGPU.MatchString(got) {
		t.Errorf("c.txt = %q, want the host's python3 output on the read-only dataset and one pinned GPU", got)
	}
	if u.readFile("d.txt") != "" {
		t.Errorf("d.txt exists though rule d failed")
	}
	// Every rule ran as one sharq job of its own, as alice.
	out, _, err := c.runAs(0, "qstat", "-x", "-u", strconv.Itoa(u.uid))
	must(t, err)
	if n := strings.Count(out, "snakejob."); n != 4 {
		t.Errorf("qstat -x lists %d Snakemake jobs, want 4 (a, b, c, d):\n%s", n, out)
	}

	// Mend the failing rule and rerun: only d runs.
	must(t, os.WriteFile(filepath.Join(u.dir, "ok.flag"), nil, 0o644))
	second, err := u.snakemake(smk)
	if err != nil {
		t.Fatalf("rerun failed: %v\n%s", err, second)
	}
	if got := u.readFile("d.txt"); got != "d\n" {
		t.Errorf("d.txt = %q after the rerun", got)
	}
	runs := strings.Fields(u.readFile("runs.log"))
	count := map[string]int{}
	for _, r := range runs {
		count[r]++
	}
	if count["a"] != 1 || count["b"] != 1 || count["c"] != 1 || count["d"] != 2 {
		t.Errorf("rule runs %v, want a, b, c once and d twice (the rerun picks up where it stopped)", count)
	}
}

// homeless is a user without a passwd entry and her submit directory.
type homeless struct {
	c   *cluster
	uid int
	dir string
}

// homelessUser picks a uid this machine does not know and makes her a
// directory in the cluster's.
func (c *cluster) homelessUser() homeless {
	c.t.Helper()
	for uid := 2000; uid < 3000; uid++ {
		if _, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			continue
		}
		dir := filepath.Join(c.dir, "home", "u"+strconv.Itoa(uid))
		must(c.t, os.MkdirAll(dir, 0o755))
		must(c.t, os.Chown(dir, uid, uid))
		return homeless{c: c, uid: uid, dir: dir}
	}
	c.t.Fatal("every uid from 2000 to 2999 has a passwd entry")
	return homeless{}
}

func (u homeless) readFile(name string) string {
	b, _ := os.ReadFile(filepath.Join(u.dir, name))
	return string(b)
}

// snakemake runs Snakemake as the user in her directory, with the
// cluster's client commands on PATH; it returns its combined output.
func (u homeless) snakemake(smk string) (string, error) {
	u.c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, smk, "--cluster", "qsub -q a -l ngpus=1 --image host",
		"--jobs", "2", "--keep-going", "--latency-wait", "10", "--max-status-checks-per-second", "5", "--nocolor")
	cmd.Dir = u.dir
	// CI=true: Snakemake then looks for finished cluster jobs every second
	// instead of every 10 (its own executors' sleep()).
	cmd.Env = []string{"SHARQ_SOCKET=" + u.c.sock, "PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + u.dir, "LANG=C.UTF-8", "CI=true"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
