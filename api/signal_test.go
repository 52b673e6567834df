package api

import (
	"strings"
	"testing"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want Signal
		err  string
	}{
		{in: "TERM", want: "SIGTERM"},
		{in: "SIGUSR1", want: "SIGUSR1"},
		{in: "usr2", want: "SIGUSR2"},
		{in: "SigHup", want: "SIGHUP"},
		{in: "9", want: "SIGKILL"},
		{in: "10", want: "SIGUSR1"},
		{in: "suspend", err: "does not suspend jobs"},
		{in: "resume", err: "does not suspend jobs"},
		{in: "admin-suspend", err: "does not suspend jobs"},
		{in: "STOP", err: "does not suspend jobs"},
		{in: "SIGTSTP", err: "does not suspend jobs"},
		{in: "19", err: "(SIGSTOP): sharq does not suspend"},
		{in: "0", err: "unknown signal 0"},
		{in: "64", err: "unknown signal 64"},
		{in: "-1", err: "unknown signal -1"},
		{in: "NOPE", err: `unknown signal "NOPE"`},
		{in: "", err: `unknown signal ""`},
		{in: strings.Repeat("A", 100), err: "unknown signal"},
	}
	for _, tt := range tests {
		got, err := ParseSignal(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSignal(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || got.Number() == 0 {
			t.Errorf("ParseSignal(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzSignal: whatever ParseSignal makes is a name the wire accepts and
// numbers, and the wire accepts nothing ParseSignal would not make.
func FuzzSignal(f *testing.F) {
	for _, s := range []string{"TERM", "SIGUSR1", "9", "STOP", "suspend", "SIGKILL", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if sig, err := ParseSignal(s); err == nil {
			var back Signal
			if sig.Number() == 0 || back.UnmarshalText([]byte(sig)) != nil || back != sig {
				t.Fatalf("ParseSignal(%q) = %q: not a wire signal", s, sig)
			}
		}
		var w Signal
		if err := w.UnmarshalText([]byte(s)); err == nil && s != "" {
			if p, err := ParseSignal(s); err != nil || p != w || w.Number() == 0 {
				t.Fatalf("wire accepts %q, ParseSignal gives %q, %v", s, p, err)
			}
		}
	})
}
