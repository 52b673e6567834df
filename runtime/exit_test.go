package runtime

import "testing"

func TestPBSExitStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  uint32
		stopped bool
		want    int
	}{
		{"success", 0, false, 0},
		{"failure", 1, false, 1},
		{"stopped job exiting 0 from its trap", 0, true, 0},
		{"killed by our SIGTERM", 143, true, 256 + 15},
		{"killed by our SIGKILL", 137, true, 256 + 9},
		{"SIGINT is not ours", 130, true, 130},
		{"last command died of SIGTERM, no stop", 143, false, 143},
		{"OOM kill without stop", 137, false, 137},
		{"255", 255, false, 255},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PBSExitStatus(tc.status, tc.stopped); got != tc.want {
				t.Errorf("PBSExitStatus(%d, %v) = %d, want %d", tc.status, tc.stopped, got, tc.want)
			}
		})
	}
}
