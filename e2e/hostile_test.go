//go:build !unit

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawClientEnv makes the test binary a raw client (rawClient): TestHostile
// runs a copy of it as an ordinary user.
const rawClientEnv = "SHARQ_E2E_RAW_CLIENT"

// rawClient sends each line of stdin as is on a new connection to sock and
// prints the answer's first line (or "no answer: ERR") on stdout.
func rawClient(sock string) int {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return 0
		}
		answer := func() string {
			c, err := net.Dial("unix", sock)
			if err != nil {
				return "no answer: " + err.Error()
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			if _, err := io.WriteString(c, line); err != nil {
				return "no answer: " + err.Error()
			}
			resp, err := bufio.NewReaderSize(c, 1<<16).ReadString('\n')
			if err != nil {
				return "no answer: " + err.Error()
			}
			return strings.TrimSpace(resp)
		}()
		fmt.Fprintln(out, answer)
		out.Flush()
	}
}

// hostileLines is the battery: every operation with wrong types,
// overflowing numbers, huge strings, control characters and forged
// internal fields. arr is alice's array, mine the attacker's job.
func hostileLines(arr, aliceJob string) []string {
	huge := strings.Repeat("x", 1<<20)
	ops := []string{"submit", "stat", "delete", "hold", "release", "alter", "shares", "nodes", "config",
		"reconfigure", "drain", "resume", "wait", "report", "session", "explode", ""}
	bodies := []string{
		`"ids":"1"`, `"ids":[1,2]`, `"ids":[null]`, `"ids":["1[0-9223372036854775806]"]`, `"ids":["1[0-20000000]"]`,
		`"ids":["` + arr + `","1[0-16777216:1]","99999999999999999999999"]`, `"ids":["` + huge + `"]`,
		`"ids":["` + aliceJob + `"]`, `"ids":["1\n\u001b[2J"]`,
		`"submit":"x"`, `"submit":{"job":[]}`, `"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp","array_indices":"0-9223372036854775807"}}`,
		`"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp","resources":{"nodes":1e400}}}`,
		`"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp"},"priority":-5}`,
		`"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp"},"priority":99999999999999999999}`,
		`"submit":{"job":{"share":"a","name":"x\nJob Id: 1.e2e\n    Job_Owner = root","command":["true"],"workdir":"/tmp"}}`,
		`"submit":{"job":{"share":"a","name":"\u001b]0;owned\u0007","command":["true"],"workdir":"/tmp/\u001b[2J"}}`,
		`"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp","hold":"u","stopping":"deleted","array_parent":"` + arr + `","array_index":2,"state":"F","owner":{"user":"root","uid":0},"id":"1.e2e"}}`,
		`"submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp","hold":"u","env":{"` + huge[:5000] + `=":"1"}}}`,
		`"stat":{"ids":["` + arr + `"],"full":true,"subjobs":true,"summary":true}`, `"stat":{"user":"` + huge + `"}`,
		`"alter":{"id":"` + aliceJob + `","priority":9999,"name":"x"}`, `"alter":{"id":"` + arr + `","walltime":-1,"deps":[{"type":"before","on":"1"}]}`,
		`"alter":{"id":"1[0-9223372036854775806]","priority":1}`, `"alter":{"id":"` + aliceJob + `","not_before":"99999-01-01T00:00:00Z"}`,
		`"node":"n1"`, `"node":"` + huge + `"`, `"report":{"from":"x"}`,
		`"session":{"job":"` + aliceJob + `","command":["cat","/etc/shadow"]}`, `"session":{"job":"` + arr + `[1]","primary":true,"node":"n1"}`,
	}
	var lines []string
	for _, op := range ops {
		for _, b := range bodies {
			lines = append(lines, `{"v":1,"op":"`+op+`",`+b+"}")
		}
	}
	return append(lines, "not json", `{"v":1e400}`, `{"v":"1","op":"stat"}`, `[`, `{"v":1,"op":"stat"`+strings.Repeat(" ", 5<<20)+"}")
}

// TestHostileRequests sends the battery as an ordinary user (bob), raw,
// one connection each. After each request the controller must still answer
// alice correctly and must not have let bob touch alice's jobs; at the end a
// kill -9 of the controller loses no job that was acknowledged.
func TestHostileRequests(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	held := c.script("held.sh", "echo hi\n")
	aliceJob := c.qsub("-q", "a", "-h", "-v", "TOKEN=alice-secret", held)
	arr := c.qsub("-q", "a", "-h", "-J", "0-3", held)

	client := filepath.Join(c.dir, "rawclient")
	self, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(client, self, 0o755))
	cmd := exec.Command(client)
	cmd.Env = []string{rawClientEnv + "=" + c.sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: bob, Gid: bob}}
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer func() { stdin.Close(); cmd.Wait() }()
	answers := bufio.NewReaderSize(stdout, 1<<20)

	acked := []string{aliceJob, arr}
	for i, line := range hostileLines(arr, aliceJob) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		answer, err := answers.ReadString('\n')
		if err != nil {
			t.Fatalf("request %d: the raw client died: %v", i, err)
		}
		var resp struct {
			JobID string `json:"job_id"`
		}
		if json.Unmarshal([]byte(answer), &resp) == nil && resp.JobID != "" {
			acked = append(acked, resp.JobID)
		}
		// alice is still answered, and sees her job as she left it.
		out, errOut, err := c.runAs(alice, "qstat", "-f", aliceJob)
		short := line
		if len(short) > 200 {
			short = short[:200] + "..."
		}
		if err != nil || !strings.Contains(out, "TOKEN=alice-secret") || !strings.Contains(out, "job_state = H") {
			t.Fatalf("after request %d %q (answer %.200s): alice's qstat -f: %v %s\n%s", i, short, answer, err, errOut, out)
		}
		if strings.Contains(answer, "alice-secret") {
			t.Fatalf("request %d %q: bob saw alice's environment: %.300s", i, short, answer)
		}
		if strings.Contains(answer, `"token"`) {
			t.Fatalf("request %d %q: bob got a session token: %.300s", i, short, answer)
		}
	}
	// bob's forged subjob did not attach itself to alice's array.
	out, _, _ := c.runAs(0, "qstat", "-t", "-x", arr)
	if strings.Count(out, "[") > 5 {
		t.Fatalf("subjobs of %s:\n%s", arr, out)
	}
	kill9(c.ctld)
	c.startCtld()
	for _, id := range acked {
		if st := c.state(id); st == "" {
			t.Fatalf("acknowledged job %s lost by the restart", id)
		}
	}
	t.Logf("%d hostile requests; %d acknowledged jobs all kept", len(hostileLines(arr, aliceJob)), len(acked))
}
