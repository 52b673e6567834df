package api

import "time"

// Report kinds (ReportSpec.Kind).
const (
	ReportUsage = "usage" // sharqctl report usage
	ReportJobs  = "jobs"  // sharqctl report jobs
)

// ReportSpec asks the job history for a report (OpReport). The period is
// [Start, End); zero values are the controller's defaults (the last 30
// days, up to now).
type ReportSpec struct {
	Kind  string    `json:"kind"`
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// By groups a usage report: "share", "user" or "partition".
	By string `json:"by,omitempty"`
	// Filters. A user who is not an admin sees only their own jobs (unless
	// the site lets users see all) and may not name another user.
	User  string `json:"user,omitempty"`
	Share string `json:"share,omitempty"`
	State string `json:"state,omitempty"` // completed, failed, deleted (jobs)
	Limit int    `json:"limit,omitempty"` // jobs: at most this many (default and cap MaxReportJobs)
	// Timeline asks for Response.Timeline too (usage --plot).
	Timeline bool `json:"timeline,omitempty"`
}

// MaxReportJobs bounds the jobs of one report answer.
const MaxReportJobs = 10_000

// UsageRow is one line of a usage report. GPU figures are GPU-hours.
type UsageRow struct {
	Key         string  `json:"key"`
	Jobs        int     `json:"jobs"`
	Owned       float64 `json:"owned_gpu_h"`
	Borrowed    float64 `json:"borrowed_gpu_h"`
	Lent        float64 `json:"lent_gpu_h"`
	Lost        float64 `json:"lost_gpu_h"`
	Grace       float64 `json:"grace_gpu_h"`
	Preemptions int     `json:"preemptions"`
	Quota       float64 `json:"quota_gpu_h"`
	InUse       float64 `json:"in_use_gpu_h"`
	Utilization float64 `json:"utilization"`
	// GPU use as the nodes sampled it: the GPU-hours of sampled jobs,
	// the part of them at < 5% use, and their efficiency (mean
	// utilization weighted by GPU-hours, 0..1).
	Sampled    float64 `json:"sampled_gpu_h,omitempty"`
	Idle       float64 `json:"idle_gpu_h,omitempty"`
	Efficiency float64 `json:"gpu_efficiency,omitempty"`
}

// UsagePoint is a share's average GPUs in use over one step of a usage
// timeline: within its quota (Owned) and beyond it (Borrowed).
type UsagePoint struct {
	Time     time.Time `json:"time"`
	Share    string    `json:"share"`
	Owned    float64   `json:"owned"`
	Borrowed float64   `json:"borrowed"`
}
