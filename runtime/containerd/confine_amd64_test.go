package containerd_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
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

// hostCompatABI runs the probe on the host: true when the kernel serves
// int 0x80 (IA32 emulation built in and enabled), false when it has no
// compatibility ABI (probeCompat). A broken probe fails the test.
func hostCompatABI(t *testing.T, bin string) bool {
	t.Helper()
	out, err := exec.Command(bin).Output()
	compat, err := probeCompat(out, err)
	if err != nil {
		t.Fatal(err)
	}
	return compat
}

// probeCompat reads a host run of the probe: it made the 32-bit call
// (true), or it died on it by SIGSEGV or SIGILL after its native call
// (false: a kernel built without CONFIG_IA32_EMULATION, or booted with
// ia32_emulation=0). Anything else is an error: the probe proves nothing.
func probeCompat(out []byte, runErr error) (bool, error) {
	if runErr == nil {
		if !strings.Contains(string(out), "compat=") || strings.Contains(string(out), "compat=-") {
			return false, fmt.Errorf("the probe's int 0x80 getpid returned an error on the host: %q", out)
		}
		return true, nil
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && strings.Contains(string(out), "native=") {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
			(ws.Signal() == syscall.SIGSEGV || ws.Signal() == syscall.SIGILL) {
			return false, nil
		}
	}
	return false, fmt.Errorf("the probe failed on the host (%v, %q): it proves nothing", runErr, out)
}

// TestProbeCompat: the reading of the host probe, with shell stand-ins
// for each kernel's answer (the real probe only ever shows one of them).
func TestProbeCompat(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		compat, err  bool
	}{
		{"compat ABI", "echo native=5; echo compat=5", true, false},
		{"compat call failed", "echo native=5; echo compat=-38", false, true},
		{"no compat ABI: SIGSEGV", "echo native=5; kill -SEGV $$", false, false},
		{"no compat ABI: SIGILL", "echo native=5; kill -ILL $$", false, false},
		{"died before its native call", "kill -SEGV $$", false, true},
		{"other signal", "echo native=5; kill -TERM $$", false, true},
		{"exit status", "echo native=5; exit 3", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command("/bin/sh", "-c", tc.script).Output()
			compat, err := probeCompat(out, err)
			if compat != tc.compat || (err != nil) != tc.err {
				t.Errorf("probeCompat = %v, %v; want %v, error %v", compat, err, tc.compat, tc.err)
			}
		})
	}
}

func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "?"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
