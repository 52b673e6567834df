package gpu

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// sharq-gpus prints Detect's report for the declared devices, and with
// --nvml fails exactly when NVML did not report the GPUs.
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"declared", []string{"sharq-gpus", "/dev/nvidia0", "/dev/nvidia1"}},
		{"nvml required", []string{"sharq-gpus", "--nvml", "/dev/nvidia0"}},
		{"single dash", []string{"sharq-gpus", "-nvml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(tc.args, &out, &errOut)
			var r Report
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("output %q: %v (stderr %q)", out.String(), err, errOut.String())
			}
			declared := 0
			for _, a := range tc.args[1:] {
				if !strings.HasPrefix(a, "-") {
					declared++
				}
			}
			if r.Source == SourceConfig && len(r.GPUs) != declared {
				t.Errorf("%d GPUs from the configuration, want the %d declared", len(r.GPUs), declared)
			}
			wantFail := slices.Contains(tc.args, "--nvml") || slices.Contains(tc.args, "-nvml")
			wantCode := 0
			if wantFail && r.Source != SourceNVML {
				wantCode = 1
			}
			if code != wantCode {
				t.Errorf("exit status %d with source %s, want %d (stderr %q)", code, r.Source, wantCode, errOut.String())
			}
			if wantCode == 1 && !strings.Contains(errOut.String(), "NVML did not report the GPUs") {
				t.Errorf("stderr %q does not say why", errOut.String())
			}
		})
	}
}
