package runtime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// compatProbe prints the pid from the 64-bit getpid, then makes the 32-bit
// getpid system call (number 20) through int 0x80, the compatibility ABI,
// and prints what it returned.
const compatProbe = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	long r;
	printf("native=%ld\n", (long)getpid());
	fflush(stdout);
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	printf("compat=%ld\n", r);
	return 0;
}
`

// TestCompatABIRefused: a job's system calls through the 32-bit ABI fail
// the seccomp filter (the thread is killed: SIGSYS), where the same binary
// on the host makes them.
func TestCompatABIRefused(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "compat")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	src, bin := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe")
	if err := os.WriteFile(src, []byte(compatProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-static", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	host, err := exec.Command(bin).Output()
	if err != nil || !strings.Contains(string(host), "compat=") || strings.Contains(string(host), "compat=-") {
		t.Fatalf("the probe's int 0x80 getpid fails on the host itself (%v, %q): this test would prove nothing", err, host)
	}
	code, out := runJob(t, rt, userSpec("compat", dir, "compat", `./probe; echo status=$?`))
	if code != 0 || field(out, "native") == "" {
		t.Fatalf("status %d, output %q", code, out)
	}
	if field(out, "compat") != "" || field(out, "status") != "159" {
		t.Errorf("a 32-bit system call from a job: %q, want the probe killed by SIGSYS (status 159)", out)
	}
}
