package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// reportCommand is sharqctl report: usage (sreport) and jobs (sacct) from
// the job history.
func reportCommand(sys *Sys) *ucli.Command {
	period := []ucli.Flag{
		&ucli.StringFlag{Name: "start", Usage: "period start: `WHEN` (2026-03-01, 2026-03-01T08:00, RFC 3339, or 7d for 7 days ago); default 30 days before the end"},
		&ucli.StringFlag{Name: "end", Usage: "period end (exclusive): `WHEN`, as --start; default now"},
		&ucli.StringFlag{Name: "format", Value: "table", Usage: "table, csv or json"},
		&ucli.StringFlag{Name: "user", Usage: "only this `USER`'s jobs (admins; others see their own)"},
		&ucli.StringFlag{Name: "share", Usage: "only this `SHARE`"},
	}
	return &ucli.Command{
		Name:      "report",
		Usage:     "GPU-hours per share, user or partition, and finished jobs, from the job history",
		UsageText: "sharqctl report usage|jobs [options]",
		Subcommands: []*ucli.Command{
			{
				Name:  "usage",
				Usage: "GPU-hours owned, borrowed, lent and lost, preemptions, jobs and utilization",
				UsageText: "sharqctl report usage [--start WHEN] [--end WHEN] [--by share|user|partition]\n" +
					"   [--format table|csv|json] [--plot FILE.svg|FILE.png] [--user USER] [--share SHARE]",
				Description: `Sums the job history over the period: a job counts in the period it ended in.
Owned GPU-hours were within the share's quota, borrowed beyond it; lent is the
share's idle quota that other shares used; lost were held by runs that ended in
a preemption, grace between their SIGTERM and exit. In use, quota (for a
partition: capacity) and utilization come from the share samples.
Users who are not admins see their own jobs only (the sampled columns of a
share are the share's, as qstat -Q shows them to everyone).

Examples:
   sharqctl report usage --by user --start 2026-03-01 --end 2026-04-01
   sharqctl report usage --format csv > usage.csv
   sharqctl report usage --start 7d --plot gpus.svg`,
				Flags: append(append([]ucli.Flag(nil), period...),
					&ucli.StringFlag{Name: "by", Value: "share", Usage: "group by share, user or partition"},
					&ucli.StringFlag{Name: "plot", Usage: "also draw GPUs in use per share (owned and borrowed) to `FILE` (.svg or .png)"}),
				Action: func(c *ucli.Context) error { return reportUsage(c, sys) },
			},
			{
				Name:      "jobs",
				Usage:     "finished jobs, like sacct",
				UsageText: "sharqctl report jobs [--start WHEN] [--end WHEN] [--user USER] [--share SHARE] [--state STATE] [--limit N] [--format F]",
				Description: `Lists the finished jobs of the period (by end time) from the job history.

Examples:
   sharqctl report jobs --start 1d
   sharqctl report jobs --user alice --state failed --format csv`,
				Flags: append(append([]ucli.Flag(nil), period...),
					&ucli.StringFlag{Name: "state", Usage: "completed, failed or deleted"},
					&ucli.IntFlag{Name: "limit", Usage: fmt.Sprintf("at most `N` jobs (and at most %d)", api.MaxReportJobs)}),
				Action: func(c *ucli.Context) error { return reportJobs(c, sys) },
			},
		},
	}
}

// ErrBadWhen is wrapped by every --start/--end parsing error.
var ErrBadWhen = errors.New("bad time")

// ParseWhen reads a report's --start or --end: a date, a date and time
// (in loc), RFC 3339, or a duration meaning that long before now ("7d",
// "12h").
func ParseWhen(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if len(s) > 64 {
		return time.Time{}, fmt.Errorf("%w: %d bytes", ErrBadWhen, len(s))
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if d, err := conf.ParseDuration(s); err == nil {
		if d > 100*366*24*time.Hour {
			return time.Time{}, fmt.Errorf("%w %q: more than 100 years ago", ErrBadWhen, s)
		}
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%w %q: want 2026-03-01, 2026-03-01T08:00, RFC 3339 or a duration ago such as 7d", ErrBadWhen, s)
}

func reportSpec(c *ucli.Context, sys *Sys, kind string) (*api.ReportSpec, string, error) {
	if c.NArg() > 0 {
		return nil, "", usagef("unexpected argument %q", c.Args().First())
	}
	now := sys.Now()
	loc := sys.Location
	if loc == nil {
		loc = time.Local
	}
	start, err := ParseWhen(c.String("start"), now, loc)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("--start: %w", err)}
	}
	end, err := ParseWhen(c.String("end"), now, loc)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("--end: %w", err)}
	}
	format := c.String("format")
	switch format {
	case "table", "csv", "json":
	default:
		return nil, "", usagef("--format %q: want table, csv or json", format)
	}
	return &api.ReportSpec{Kind: kind, Start: start, End: end, User: c.String("user"), Share: c.String("share")}, format, nil
}

func reportUsage(c *ucli.Context, sys *Sys) error {
	spec, format, err := reportSpec(c, sys, api.ReportUsage)
	if err != nil {
		return err
	}
	spec.By = c.String("by")
	switch spec.By {
	case "share", "user", "partition":
	default:
		return usagef("--by %q: want share, user or partition", spec.By)
	}
	plot := c.String("plot")
	if plot != "" {
		if _, err := plotFormat(plot); err != nil {
			return usageError{err}
		}
		spec.Timeline = true
	}
	resp, err := call(c.Context, sys, api.Request{Op: api.OpReport, Report: spec})
	if err != nil {
		return err
	}
	if plot != "" {
		if err := saveUsagePlot(plot, resp.Timeline, sys); err != nil {
			return err
		}
	}
	switch format {
	case "json":
		return writeJSON(sys.Stdout, resp.Usage)
	case "csv":
		return writeUsageCSV(sys.Stdout, spec.By, resp.Usage)
	}
	return writeUsageTable(sys.Stdout, spec.By, resp.Usage, sys)
}

func reportJobs(c *ucli.Context, sys *Sys) error {
	spec, format, err := reportSpec(c, sys, api.ReportJobs)
	if err != nil {
		return err
	}
	spec.State, spec.Limit = c.String("state"), c.Int("limit")
	if spec.Limit < 0 {
		return usagef("--limit must not be negative")
	}
	resp, err := call(c.Context, sys, api.Request{Op: api.OpReport, Report: spec})
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeJSON(sys.Stdout, resp.Jobs)
	case "csv":
		return writeJobsCSV(sys.Stdout, resp.Jobs)
	}
	return writeJobsReport(sys.Stdout, resp.Jobs, sys)
}

func hours(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// hoursCSV keeps more digits for spreadsheets: a short job's GPU-hours.
func hoursCSV(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// usageColumns are a usage report's columns; share and partition reports
// also have the sampled ones.
func usageColumns(by string) []string {
	cols := []string{by, "jobs", "owned_gpu_h", "borrowed_gpu_h", "lost_gpu_h", "grace_gpu_h", "preemptions", "idle_gpu_h", "gpu_efficiency"}
	if by != "user" {
		cols = append(cols, "lent_gpu_h", "in_use_gpu_h", "quota_gpu_h", "utilization")
		if by == "partition" {
			cols[len(cols)-2] = "capacity_gpu_h"
		}
	}
	return cols
}

func usageValues(by string, r api.UsageRow, hours func(float64) string) []string {
	eff := "-" // nothing sampled
	if r.Sampled > 0 {
		eff = strconv.FormatFloat(100*r.Efficiency, 'f', 1, 64) + "%"
	}
	v := []string{r.Key, strconv.Itoa(r.Jobs), hours(r.Owned), hours(r.Borrowed), hours(r.Lost), hours(r.Grace),
		strconv.Itoa(r.Preemptions), hours(r.Idle), eff}
	if by != "user" {
		v = append(v, hours(r.Lent), hours(r.InUse), hours(r.Quota), strconv.FormatFloat(100*r.Utilization, 'f', 1, 64)+"%")
	}
	return v
}

// writeUsageCSV writes a usage report as CSV, its cells neutralised
// (csvCell).
func writeUsageCSV(w io.Writer, by string, rows []api.UsageRow) error {
	cw := csv.NewWriter(w)
	cw.Write(usageColumns(by))
	for _, r := range rows {
		v := usageValues(by, r, hoursCSV)
		v[8] = "" // gpu_efficiency: a fraction, empty when nothing was sampled
		if r.Sampled > 0 {
			v[8] = strconv.FormatFloat(r.Efficiency, 'f', 4, 64)
		}
		if by != "user" {
			v[len(v)-1] = strconv.FormatFloat(r.Utilization, 'f', 4, 64)
		}
		writeCSVRow(cw, v)
	}
	cw.Flush()
	return cw.Error()
}

func writeUsageTable(w io.Writer, by string, rows []api.UsageRow, sys *Sys) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"", strings.ToUpper(by[:1]) + by[1:]}, Width: 16, Trunc: true},
		{Head: []string{"", "Jobs"}, Width: 7, Right: true},
		{Head: []string{"GPU-h", "Owned"}, Width: 10, Right: true},
		{Head: []string{"GPU-h", "Borrowed"}, Width: 10, Right: true},
		{Head: []string{"GPU-h", "Lost"}, Width: 9, Right: true},
		{Head: []string{"GPU-h", "Grace"}, Width: 8, Right: true},
		{Head: []string{"", "Preempted"}, Width: 9, Right: true},
		{Head: []string{"GPU-h", "Idle<5%"}, Width: 8, Right: true},
		{Head: []string{"GPU", "Eff"}, Width: 6, Right: true},
	}}
	if by != "user" {
		q := "Quota"
		if by == "partition" {
			q = "Capacity"
		}
		t.Cols = append(t.Cols, column{Head: []string{"GPU-h", "Lent"}, Width: 9, Right: true},
			column{Head: []string{"GPU-h", "InUse"}, Width: 10, Right: true},
			column{Head: []string{"GPU-h", q}, Width: 10, Right: true},
			column{Head: []string{"", "Util"}, Width: 6, Right: true})
	}
	var total api.UsageRow
	for _, r := range rows {
		row := make([]cell, 0, len(t.Cols))
		for i, v := range usageValues(by, r, hours) {
			c := cell{Text: v}
			if i == 3 && r.Borrowed > 0 {
				c.Style = styleYellow
			}
			if i == 4 && r.Lost > 0 {
				c.Style = styleRed
			}
			row = append(row, c)
		}
		t.Rows = append(t.Rows, row)
		total.Jobs += r.Jobs
		total.Owned += r.Owned
		total.Borrowed += r.Borrowed
		total.Lost += r.Lost
		total.Grace += r.Grace
		total.Preemptions += r.Preemptions
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no finished jobs in the period")
		return err
	}
	if err := t.render(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "total: %d jobs, %s GPU-h owned, %s borrowed, %s lost to preemption\n",
		total.Jobs, hours(total.Owned), hours(total.Borrowed), hours(total.Lost))
	return err
}

var jobColumns = []string{"job_id", "user", "share", "partition", "name", "gpus", "nodes", "submit", "eligible", "start", "end",
	"elapsed_s", "exit_status", "state", "reason", "runs", "preemptions", "owned_gpu_h", "borrowed_gpu_h", "lost_gpu_h", "grace_gpu_h"}

// stateOf is a history job's outcome (a controller before outcomes were
// recorded sends none: its exit status's).
func stateOf(j *api.Job) string {
	if j.Outcome != api.OutcomeNone {
		return string(j.Outcome)
	}
	return string(api.ExitOutcome(j.ExitStatus))
}

func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func jobValues(j *api.Job) []string { return jobValuesIn(j, hours) }

func jobValuesIn(j *api.Job, hours func(float64) string) []string {
	exit := ""
	if j.ExitStatus != nil {
		exit = strconv.Itoa(*j.ExitStatus)
	}
	var nodes []string
	for _, a := range j.Allocs {
		nodes = append(nodes, a.Node+"["+compressInts(a.GPUs)+"]")
	}
	return []string{j.ID, j.Owner.User, j.Share, j.Partition, j.Name,
		strconv.Itoa(max(j.Resources.Nodes, 1) * j.Resources.GPUsPerNode), strings.Join(nodes, " "),
		rfc(j.SubmitTime), rfc(j.Acct.Eligible), rfc(j.StartTime), rfc(j.EndTime),
		strconv.FormatInt(int64(j.Used.Seconds()), 10), exit, stateOf(j), j.Reason, strconv.Itoa(j.Runs),
		strconv.Itoa(j.Preemptions), hours(j.Acct.Owned / 3600), hours(j.Acct.Borrowed / 3600),
		hours(j.Acct.Lost / 3600), hours(j.Acct.Grace / 3600)}
}

// writeJobsCSV writes a jobs report as CSV, its cells neutralised
// (csvCell): a job's name or reason is its user's text.
func writeJobsCSV(w io.Writer, jobs []api.Job) error {
	cw := csv.NewWriter(w)
	cw.Write(jobColumns)
	for i := range jobs {
		writeCSVRow(cw, jobValuesIn(&jobs[i], hoursCSV))
	}
	cw.Flush()
	return cw.Error()
}

func writeJobsReport(w io.Writer, jobs []api.Job, sys *Sys) error {
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "no finished jobs in the period")
		return err
	}
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"", "Job ID"}, Width: 16, Trunc: true},
		{Head: []string{"", "User"}, Width: 10, Trunc: true},
		{Head: []string{"", "Share"}, Width: 10, Trunc: true},
		{Head: []string{"", "Name"}, Width: 12, Trunc: true},
		{Head: []string{"", "GPUs"}, Width: 4, Right: true},
		{Head: []string{"", "End"}, Width: 16},
		{Head: []string{"", "Elapsed"}, Width: 9, Right: true},
		{Head: []string{"", "State"}, Width: 9},
		{Head: []string{"", "Exit"}, Width: 4, Right: true},
		{Head: []string{"", "Pre"}, Width: 3, Right: true},
		{Head: []string{"GPU-h", "Owned"}, Width: 8, Right: true},
		{Head: []string{"GPU-h", "Borrowed"}, Width: 8, Right: true},
	}}
	loc := sys.Location
	if loc == nil {
		loc = time.Local
	}
	for i := range jobs {
		j := &jobs[i]
		v := jobValues(j)
		st := cell{Text: v[13]}
		switch st.Text {
		case "failed":
			st.Style = styleRed
		case "deleted":
			st.Style = styleDim
		}
		el := j.Used.Round(time.Second)
		t.Rows = append(t.Rows, []cell{{Text: j.ID}, {Text: j.Owner.User}, {Text: j.Share}, {Text: j.Name}, {Text: v[5]},
			{Text: j.EndTime.In(loc).Format("2006-01-02 15:04")},
			{Text: fmt.Sprintf("%02d:%02d:%02d", int(el.Hours()), int(el.Minutes())%60, int(el.Seconds())%60)},
			st, {Text: v[12]}, {Text: v[16]}, {Text: v[17]}, {Text: v[18]}})
	}
	if err := t.render(w); err != nil {
		return err
	}
	if len(jobs) == api.MaxReportJobs {
		_, err := fmt.Fprintf(w, "(the first %d jobs; narrow the period or filter for the rest)\n", api.MaxReportJobs)
		return err
	}
	return nil
}
