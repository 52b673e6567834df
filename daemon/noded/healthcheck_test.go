package noded

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "check")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunHealthCheck(t *testing.T) {
	tests := []struct {
		name    string
		body    string // "" = a program that does not exist
		timeout time.Duration
		want    string // prefix of the verdict; "" = healthy
	}{
		{"passes", "echo all good\nexit 0\n", time.Minute, ""},
		{"first line", "echo\necho '  ERROR: /scratch is not mounted  '\necho second line\nexit 1\n", time.Minute, "HealthCheck: ERROR: /scratch is not mounted"},
		{"stderr too", "echo 'GPU 3 missing' >&2\nexit 3\n", time.Minute, "HealthCheck: GPU 3 missing"},
		{"no output", "exit 2\n", time.Minute, "HealthCheck: "},
		{"killed", "kill -9 $$\n", time.Minute, "HealthCheck: "},
		{"too long", "sleep 30\n", 200 * time.Millisecond, "HealthCheck: "},
		{"missing", "", time.Minute, "HealthCheck: "},
		{"hostile output", "printf 'bad\\001\\033[31m%0500d' 0\nexit 1\n", time.Minute, "HealthCheck: bad  [31m000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prog := filepath.Join(t.TempDir(), "absent")
			if tc.body != "" {
				prog = script(t, tc.body)
			}
			got := runHealthCheck(context.Background(), prog, tc.timeout)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("verdict %q, want %q...", got, tc.want)
			}
			if len(got) > maxHealthReason || strings.ContainsFunc(got, func(r rune) bool { return r < ' ' }) {
				t.Errorf("verdict %q: longer than %d or with control characters", got, maxHealthReason)
			}
			switch tc.name {
			case "no output", "killed":
				if !strings.Contains(got, prog+" failed: ") {
					t.Errorf("verdict %q does not say how it failed", got)
				}
			case "too long":
				if !strings.Contains(got, "timed out after") {
					t.Errorf("verdict %q does not say it timed out", got)
				}
			case "missing":
				if !strings.Contains(got, "cannot run") {
					t.Errorf("verdict %q does not say it cannot run", got)
				}
			}
		})
	}
}
