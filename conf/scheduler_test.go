package conf

import (
	"testing"
	"time"
)

func TestSchedulerDefaults(t *testing.T) {
	c, err := Load("testdata/good/minimal.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Scheduler.Backfill {
		t.Error("backfill must be on by default")
	}
	full, err := Load("testdata/good/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		partition string
		own, want time.Duration
	}{
		{"own walltime wins", "a100", time.Hour, time.Hour},
		{"default_walltime", "a100", 0, 12 * time.Hour},
		{"no limit without max_walltime", "cpu", 0, 0},
		{"unknown partition", "nope", 0, 0},
	}
	if got := full.Partitions[0].NeverFitsFailAfter; got != 48*time.Hour {
		t.Errorf("never_fits_fail_after of %s = %v, want 48h", full.Partitions[0].Name, got)
	}
	if got := c.Partitions[0].NeverFitsFailAfter; got != 0 {
		t.Errorf("never_fits_fail_after by default = %v, want 0 (held until changed)", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := full.JobWalltime(tt.partition, tt.own); got != tt.want {
				t.Errorf("JobWalltime(%q, %v) = %v, want %v", tt.partition, tt.own, got, tt.want)
			}
		})
	}
}
