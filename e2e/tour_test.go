//go:build !unit

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readTour returns the commands of README.md's "A short tour", as a user
// types them: one a line, comments cut, a here-document with its lines.
func readTour(readme string) ([]string, error) {
	i := strings.Index(readme, "\n## A short tour")
	if i < 0 {
		return nil, fmt.Errorf("README.md has no section \"A short tour\"")
	}
	block := readme[i:]
	j := strings.Index(block, "\n```sh\n")
	if j < 0 {
		return nil, fmt.Errorf("README.md's tour has no sh block")
	}
	block = block[j+len("\n```sh\n"):]
	k := strings.Index(block, "\n```")
	if k < 0 {
		return nil, fmt.Errorf("README.md's tour block does not end")
	}
	heredoc := regexp.MustCompile(`<<'(\w+)'`)
	var cmds []string
	end := ""
	for _, line := range strings.Split(block[:k], "\n") {
		if end != "" {
			cmds[len(cmds)-1] += "\n" + line
			if line == end {
				end = ""
			}
			continue
		}
		line = cutComment(line)
		if line == "" {
			continue
		}
		cmds = append(cmds, line)
		if m := heredoc.FindStringSubmatch(line); m != nil {
			end = m[1]
		}
	}
	if end != "" {
		return nil, fmt.Errorf("README.md's tour: here-document %s does not end", end)
	}
	return cmds, nil
}

// cutComment removes a shell comment (an unquoted # after a blank) and the
// blanks around what is left.
func cutComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

func TestReadTour(t *testing.T) {
	cmds, err := readTour("intro\n## A short tour\n\ntext\n\n```sh\n" +
		"su - u              # a comment\n" +
		"cat > a.sh <<'EOF'\n#!/bin/sh\n#PBS -N a  # kept\nEOF\n" +
		"qsub -- sh -c 'echo # not a comment'  # a comment\n" +
		"qdel 1.x\n```\nafter\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"su - u", "cat > a.sh <<'EOF'\n#!/bin/sh\n#PBS -N a  # kept\nEOF",
		"qsub -- sh -c 'echo # not a comment'", "qdel 1.x"}
	if fmt.Sprintf("%q", cmds) != fmt.Sprintf("%q", want) {
		t.Errorf("readTour = %q, want %q", cmds, want)
	}

	// README's own tour: every command has its check (TestMakeUp runs it).
	readme, err := os.ReadFile("../README.md")
	must(t, err)
	cmds, err = readTour(string(readme))
	must(t, err)
	for _, cmd := range cmds {
		first, _, _ := strings.Cut(cmd, "\n")
		if _, ok := tourChecks[first]; !ok && first != "su - sharqdemo" && !strings.HasPrefix(first, "qsub -I ") {
			t.Errorf("README's tour runs %q, which tourChecks has no check for", first)
		}
	}
}

// tourCheck says whether a command of the tour did what README says it
// does: out is what the terminal showed, status its exit status.
type tourCheck func(out string, status int) error

// tourChecks are README's claims about each command of the tour. Every
// command of the tour must have one: a command added to README without a
// check fails the test, so README and the test cannot drift apart.
var tourChecks = map[string]tourCheck{
	`qsub -q vision -l ngpus=2 -- /bin/sh -c 'echo GPUs $CUDA_VISIBLE_DEVICES; sleep 120'`: prints("1.local"),
	"cat > train.sh <<'EOF'":  prints(""),
	"qsub -q vision train.sh": prints("2.local"),
	"qstat -a":                shows(`(?m)^1\.local .* R `, `(?m)^2\.local .*train .* R `),
	"qstat -Q":                shows(`(?m)^vision .*\b6\b`, `(?m)^nlp\b`, `(?m)^infra\b`),
	"qstat -f 2.local":        shows(`job_state = R`, `Job_Name = train`, `history\.`),
	"qexec 2.local -- ps":     shows(`sleep 300`),
	"qsub -q nlp -l ngpus=3 -W block=true -- /bin/true": prints("3.local"),
	"qstat -T": shows(`Est`),
	"qsub -h -q nlp -l ngpus=1 -- /bin/sleep 30": prints("4.local"),
	"qalter -p -512 4.local; qrls 4.local":       prints(""),
	"qdel 2.local":                               prints(""),
	"qstat -x":                                   shows(`(?m)^3\.local .* F `, `(?m)^2\.local .* [EF] `),
	`qsub -q nlp --image host -- python3 -c 'import sys; print(sys.version)'`: prints("5.local"),
}

// prints: the command succeeds and prints exactly want (a line).
func prints(want string) tourCheck {
	return func(out string, status int) error {
		if got := strings.TrimSpace(out); status != 0 || got != want {
			return fmt.Errorf("exit status %d, output %q; want 0 and %q", status, got, want)
		}
		return nil
	}
}

// shows: the command succeeds and its output matches every pattern.
func shows(patterns ...string) tourCheck {
	return func(out string, status int) error {
		if status != 0 {
			return fmt.Errorf("exit status %d, output:\n%s", status, out)
		}
		for _, p := range patterns {
			if !regexp.MustCompile(p).MatchString(out) {
				return fmt.Errorf("output lacks %s:\n%s", p, out)
			}
		}
		return nil
	}
}

// runTour runs README's tour on the local cluster as a person would: a
// login shell of the demo user (su - sharqdemo) on a terminal, each command
// typed in turn, qsub -I's shell used and left with exit. It needs a fresh
// cluster (job ids from 1) and leaves no job of its own behind.
func runTour(t *testing.T, repo, clients string, logs fmt.Stringer) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	must(t, err)
	cmds, err := readTour(string(readme))
	must(t, err)
	if len(cmds) == 0 || cmds[0] != "su - sharqdemo" {
		t.Fatalf("README's tour does not start with su - sharqdemo: %q", cmds)
	}
	sh := exec.Command("su", "-", "sharqdemo")
	sh.Env = []string{"TERM=dumb", "LANG=C", "PATH=/usr/bin:/bin"}
	tm := startTerm(t, sh, &syscall.SysProcAttr{Setsid: true, Setctty: true}, logs)
	// No echo and no prompts: the terminal then shows only what the
	// commands print, and a marker (quoted apart, so that it differs from
	// the keys that type it) ends each command's output. The marker is on
	// the command's own line: typed ahead on a line of its own, a command
	// that reads the terminal (qexec) would take it.
	run := func(cmd string, d time.Duration) (string, int) {
		t.Helper()
		first, rest, multi := strings.Cut(cmd, "\n")
		line := first + `; echo "@@""END $?"`
		if strings.TrimSpace(first) == "" {
			line = `echo "@@""END $?"`
		}
		if multi {
			line += "\n" + rest
		}
		tm.send(line + "\n")
		m := tm.expect(`(?s)^(.*?)@@END (\d+)\r?\n`, d)
		var status int
		fmt.Sscan(m[2], &status)
		return strings.ReplaceAll(m[1], "\r", ""), status
	}
	// Output files of an earlier tour (job ids start at 1 in every make
	// up, and a job's output is appended to) go first.
	if out, status := run("stty -echo; PS1= PS2=; rm -f sh.[oe]1 train.[oe]2 true.[oe]3 sleep.[oe]4 python3.[oe]5 STDIN.[oe]6; "+
		"id -un; echo $SHARQ_SOCKET; command -v qsub", time.Minute); status != 0 ||
		!strings.Contains(out, "sharqdemo\n") || !strings.Contains(out, "sharq.sock") || !strings.Contains(out, clients+"/qsub") {
		t.Fatalf("su - sharqdemo: a login shell without the cluster's SHARQ_SOCKET and PATH (status %d):\n%s", status, out)
	}
	for _, cmd := range cmds[1:] {
		first, _, _ := strings.Cut(cmd, "\n")
		if strings.HasPrefix(cmd, "qsub -I ") {
			tm.send(cmd + `; echo "@@""END $?"` + "\n")
			id := tm.expect(`qsub: job (\S+) ready`, 2*time.Minute)[1]
			tm.send(`echo "GPUs=""$CUDA_VISIBLE_DEVICES"` + "\n")
			tm.expect(`GPUs=\d,\d`, time.Minute)
			tm.send("exit\n")
			if m := tm.expect(`(?s)^(.*?)@@END (\d+)\r?\n`, 2*time.Minute); m[2] != "0" {
				t.Errorf("%s: job %s's shell ended with status %s:\n%s", cmd, id, m[2], m[1])
			}
			continue
		}
		check, ok := tourChecks[first]
		if !ok {
			t.Errorf("README's tour runs %q, which this test has no check for: add one to tourChecks", first)
			continue
		}
		out, status := run(cmd, 3*time.Minute)
		if err := check(out, status); err != nil {
			t.Errorf("tour: %s: %v", first, err)
		}
	}
	// The host-image job ran on this machine's Python.
	home, status := run("echo $HOME", time.Minute)
	home = strings.TrimSpace(home)
	if status != 0 || home == "" {
		t.Fatalf("no HOME in the demo user's shell")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(home, "python3.o5"))
		if err == nil && regexp.MustCompile(`^3\.\d+\.\d+ `).Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host-image job's output (%s/python3.o5): %q, %v; want Python's version", home, b, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The tour's jobs still queued or running (job 1, the released one)
	// go, so that the cluster is idle again.
	run("qdel 1.local 2.local 3.local 4.local 5.local 6.local 2>/dev/null", time.Minute)
	deadline = time.Now().Add(2 * time.Minute)
	for {
		out, _ := run("qstat", time.Minute)
		if strings.TrimSpace(out) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tour's jobs did not end within 2m of qdel:\n%s", out)
		}
		time.Sleep(time.Second)
	}
	tm.send("exit\n")
}
