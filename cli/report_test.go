package cli

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestParseWhen(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{"", time.Time{}, false},
		{"2026-02-01", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), false},
		{"2026-02-01T08:30", time.Date(2026, 2, 1, 8, 30, 0, 0, time.UTC), false},
		{"2026-02-01 08:30:15", time.Date(2026, 2, 1, 8, 30, 15, 0, time.UTC), false},
		{"2026-02-01T08:30:00+02:00", time.Date(2026, 2, 1, 6, 30, 0, 0, time.UTC), false},
		{"7d", testNow.Add(-7 * 24 * time.Hour), false},
		{"90m", testNow.Add(-90 * time.Minute), false},
		{"yesterday", time.Time{}, true},
		{"2026-13-01", time.Time{}, true},
		{"-5d", time.Time{}, true},
		{"999999d", time.Time{}, true},
		{strings.Repeat("1", 100), time.Time{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseWhen(tc.in, testNow, time.UTC)
			if tc.bad {
				if !errors.Is(err, ErrBadWhen) {
					t.Fatalf("ParseWhen(%q) = %v, %v; want ErrBadWhen", tc.in, got, err)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("ParseWhen(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"2026-02-01", "7d", "2026-02-01T08:30:00Z", "1h30m", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseWhen(s, testNow, time.UTC)
		if err != nil && !errors.Is(err, ErrBadWhen) {
			t.Fatalf("%q: error %v is not ErrBadWhen", s, err)
		}
		if err == nil && s != "" && got.IsZero() {
			t.Fatalf("%q: zero time without an error", s)
		}
	})
}

func TestReportRequests(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name string
		args []string
		want *api.ReportSpec
		code int
	}{
		{"usage defaults", []string{"report", "usage"}, &api.ReportSpec{Kind: api.ReportUsage, By: "share"}, 0},
		{"usage by user period", []string{"report", "usage", "--by", "user", "--start", "2026-02-01", "--end", "1d"},
			&api.ReportSpec{Kind: api.ReportUsage, By: "user", Start: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), End: testNow.Add(-day)}, 0},
		{"usage one share csv", []string{"report", "usage", "--share", "vision", "--format", "csv"},
			&api.ReportSpec{Kind: api.ReportUsage, By: "share", Share: "vision"}, 0},
		{"jobs filters", []string{"report", "jobs", "--user", "bob", "--state", "failed", "--limit", "5"},
			&api.ReportSpec{Kind: api.ReportJobs, User: "bob", State: "failed", Limit: 5}, 0},
		{"bad by", []string{"report", "usage", "--by", "team"}, nil, ExitUsage},
		{"bad format", []string{"report", "jobs", "--format", "xml"}, nil, ExitUsage},
		{"bad start", []string{"report", "jobs", "--start", "soon"}, nil, ExitUsage},
		{"bad plot", []string{"report", "usage", "--plot", "x.gif"}, nil, ExitUsage},
		{"negative limit", []string{"report", "jobs", "--limit", "-1"}, nil, ExitUsage},
		{"stray argument", []string{"report", "jobs", "alice"}, nil, ExitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSys(t)
			code := Sharqctl(context.Background(), append([]string{"sharqctl"}, tc.args...), s.Sys)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, s.err.String())
			}
			if tc.want == nil {
				if len(s.rec.reqs) != 0 {
					t.Fatalf("sent %+v", s.rec.reqs)
				}
				return
			}
			if len(s.rec.reqs) != 1 || !reflect.DeepEqual(s.rec.reqs[0].Report, tc.want) {
				t.Fatalf("sent %+v, want %+v", s.rec.reqs[0].Report, tc.want)
			}
		})
	}
}

func TestUsageOutputs(t *testing.T) {
	rows := []api.UsageRow{{Key: "nlp", Jobs: 3, Owned: 1.5, Borrowed: 0.25, Lost: 0.125, Preemptions: 1, Lent: 2, InUse: 1.75, Quota: 3, Utilization: 0.5833},
		{Key: "vision", Jobs: 1, Owned: 4, Sampled: 4, Idle: 1.5, Efficiency: 0.25}}
	var b bytes.Buffer
	if err := writeUsageCSV(&b, "share", rows); err != nil {
		t.Fatal(err)
	}
	want := "share,jobs,owned_gpu_h,borrowed_gpu_h,lost_gpu_h,grace_gpu_h,preemptions,idle_gpu_h,gpu_efficiency,lent_gpu_h,in_use_gpu_h,quota_gpu_h,utilization\n" +
		"nlp,3,1.5000,0.2500,0.1250,0.0000,1,0.0000,,2.0000,1.7500,3.0000,0.5833\n" +
		"vision,1,4.0000,0.0000,0.0000,0.0000,0,1.5000,0.2500,0.0000,0.0000,0.0000,0.0000\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeUsageTable(&b, "user", []api.UsageRow{{Key: "alice", Jobs: 1, Owned: 2}, {Key: "bob", Jobs: 1, Owned: 4, Sampled: 4, Idle: 1.5, Efficiency: 0.25}}, &Sys{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Idle<5%") || !strings.Contains(b.String(), "1.50") || !strings.Contains(b.String(), "25.0%") {
		t.Fatalf("user table without the GPU use columns:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "alice") || strings.Contains(b.String(), "Lent") || !strings.Contains(b.String(), "total: 2 jobs, 6.00 GPU-h owned") {
		t.Fatalf("user table:\n%s", b.String())
	}
}
