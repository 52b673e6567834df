package cli

import (
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// stateStyle colours a job state letter on a terminal.
func stateStyle(s api.State) string {
	switch s {
	case api.StateRunning, api.StateArray:
		return styleGreen
	case api.StateHeld:
		return styleMag
	case api.StateWaiting:
		return styleBlue
	case api.StateExiting:
		return styleYellow
	case api.StateFinished:
		return styleDim
	}
	return ""
}

// timeUse is qstat's Time Use: 0 before a job first ran, else hh:mm:ss.
func timeUse(j api.JobSummary) string {
	if j.Used == 0 && j.StartTime.IsZero() {
		return "0"
	}
	return FormatHMS(j.Used)
}

// elapsed is how long the job's current (or last) run has taken.
func elapsed(j api.JobSummary, now time.Time) time.Duration {
	if j.StartTime.IsZero() {
		return 0
	}
	switch j.State {
	case api.StateRunning, api.StateExiting, api.StateArray:
		return now.Sub(j.StartTime)
	case api.StateFinished:
		if !j.EndTime.IsZero() && j.EndTime.After(j.StartTime) {
			return j.EndTime.Sub(j.StartTime)
		}
	}
	return 0
}

// execHost writes a job's placement as gpu01/0-3+gpu02/0-3.
func execHost(allocs []api.Alloc) string {
	parts := make([]string, 0, len(allocs))
	for _, a := range allocs {
		if len(a.GPUs) == 0 {
			parts = append(parts, a.Node)
			continue
		}
		g := slices.Clone(a.GPUs)
		sort.Ints(g)
		parts = append(parts, a.Node+"/"+compressInts(g))
	}
	return strings.Join(parts, "+")
}

// tableView is how qstat's job tables show: its -w, -n, -s, -1, -G, -M
// and -p.
type tableView struct {
	wide, nodes, comments, oneLine, gb, mw, percent bool
}

// after is what follows a job's row: its nodes (-n) and its comment (-s),
// on lines of their own or, with -1, on the row's line.
func (v tableView) after(j api.JobSummary) string {
	var parts []string
	if v.nodes {
		parts = append(parts, strings.TrimSpace(nodeLine(j)))
	}
	if v.comments && j.Reason != "" {
		parts = append(parts, j.Reason)
	}
	if len(parts) == 0 {
		return ""
	}
	if v.oneLine {
		return strings.Join(parts, "   ")
	}
	return "   " + strings.Join(parts, "\n   ")
}

// newTable starts a job table in view v.
func (v tableView) newTable(sys *Sys, cols []column) *table {
	return &table{Fit: sys.Terminal, Color: sys.Color, Wide: v.wide, Inline: v.oneLine, Cols: cols}
}

// memory writes qstat -a's Req'd Memory: in gigabytes with -G, megawords
// with -M (rounded up, as PBS does), else in the largest unit reached.
func (v tableView) memory(n int64) string {
	switch {
	case n <= 0:
		return "--"
	case v.gb:
		return pbsScaled(n, 30, "b")
	case v.mw:
		return pbsScaled((n+7)/8, 20, "w")
	}
	return formatSizeShort(n)
}

// pbsScaled writes n (bytes or words) in the unit 1<<shift, rounded up,
// going up a unit while the number has more than four digits (OpenPBS's
// cnv_size).
func pbsScaled(n int64, shift uint, suffix string) string {
	units := "bkmgtp"
	u := int(shift / 10)
	v := (n + (int64(1)<<shift - 1)) >> shift
	for v > 9999 && u < len(units)-1 {
		v = (v + 1023) >> 10
		u++
	}
	letter := string(units[u])
	if letter == "b" {
		letter = ""
	}
	return strconv.FormatInt(v, 10) + letter + suffix
}

// percentDone is qstat -p's "% done": the share of its walltime a job has
// used, "--" for one that has not started or asked for no walltime and for
// an array (PBS counts its subjobs done, which a summary does not hold),
// 100 for a finished one.
func percentDone(j api.JobSummary, now time.Time) string {
	switch j.State {
	case api.StateQueued, api.StateWaiting, api.StateHeld, api.StateArray:
		return "--"
	case api.StateFinished:
		return "100"
	}
	if j.Walltime <= 0 {
		return "--"
	}
	used := max(j.Used, elapsed(j, now))
	return strconv.FormatInt(int64(used*100/j.Walltime), 10)
}

// writeJobTableEst writes qstat -T: pending jobs with the start time the
// scheduler estimates for them (their reservation), "--" without one.
func writeJobTableEst(w io.Writer, jobs []api.JobSummary, sys *Sys, v tableView) error {
	now, loc := sys.now(), sys.loc()
	t := v.newTable(sys, append(altLeadCols(),
		column{Head: []string{"Req'd", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "S"}, Width: 1},
		column{Head: []string{"Est", "Start"}, Width: 12, Right: true},
		column{Head: []string{"", "Reason"}, Width: 6},
	))
	for _, j := range jobs {
		t.Rows = append(t.Rows, append(altLeadCells(j),
			cell{Text: formatHM(j.Walltime)},
			cell{Text: string(j.State), Style: stateStyle(j.State)},
			cell{Text: estStart(j.EstStart, now, loc)}, cell{Text: j.Reason, Style: reasonStyle(j)},
		))
		t.After = append(t.After, v.after(j))
	}
	return t.render(w)
}

// estStart is qstat -T's Est Start: "--" without an estimate, the time of
// day when it is today, else the date and time.
func estStart(t, now time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "--"
	}
	t, now = t.In(loc), now.In(loc)
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Jan 02 15:04")
}

// writeJobTable writes qstat's default table, PBS's columns; with -p the
// percentage done replaces Time Use.
func writeJobTable(w io.Writer, jobs []api.JobSummary, sys *Sys, v tableView) error {
	use := column{Head: []string{"Time Use"}, Width: 8, Right: true}
	if v.percent {
		use.Head = []string{"% done"}
	}
	t := v.newTable(sys, []column{
		{Head: []string{"Job id"}, Width: 16, Trunc: true, Sep: "  "},
		{Head: []string{"Name"}, Width: 16, Trunc: true},
		{Head: []string{"User"}, Width: 16, Trunc: true, Sep: "  "},
		use,
		{Head: []string{"S"}, Width: 1},
		{Head: []string{"Queue"}, Width: 5},
	})
	now := sys.now()
	for _, j := range jobs {
		u := timeUse(j)
		if v.percent {
			u = percentDone(j, now)
		}
		t.Rows = append(t.Rows, []cell{
			{Text: j.ID}, {Text: j.Name}, {Text: j.User}, {Text: u},
			{Text: string(j.State), Style: stateStyle(j.State)}, {Text: j.Share},
		})
		t.After = append(t.After, v.after(j))
	}
	return t.render(w)
}

func nodeLine(j api.JobSummary) string {
	if len(j.Allocs) == 0 {
		return "   --"
	}
	return "   " + execHost(j.Allocs)
}

// writeJobTableAlt writes qstat -a: nodes, GPUs, memory, walltime,
// elapsed time and the pending reason.
func writeJobTableAlt(w io.Writer, jobs []api.JobSummary, sys *Sys, v tableView) error {
	now := sys.now()
	t := v.newTable(sys, append(altLeadCols(),
		column{Head: []string{"Req'd", "Memory"}, Width: 6, Right: true},
		column{Head: []string{"Req'd", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "S"}, Width: 1},
		column{Head: []string{"Elap", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "Reason"}, Width: 6},
	))
	for _, j := range jobs {
		t.Rows = append(t.Rows, append(altLeadCells(j),
			cell{Text: v.memory(j.MemPerNode * int64(max(j.Nodes, 1)))}, cell{Text: formatHM(j.Walltime)},
			cell{Text: string(j.State), Style: stateStyle(j.State)},
			cell{Text: formatHM(elapsed(j, now))}, cell{Text: j.Reason, Style: reasonStyle(j)},
		))
		t.After = append(t.After, v.after(j))
	}
	return t.render(w)
}

// altLeadCols are the leading columns qstat -a and qstat -T share (PBS
// Pro's alternate layout): the job, its owner, queue, name and size.
func altLeadCols() []column {
	return []column{
		{Head: []string{"", "Job ID"}, Width: 15, Trunc: true},
		{Head: []string{"", "Username"}, Width: 8, Trunc: true},
		{Head: []string{"", "Queue"}, Width: 8, Trunc: true},
		{Head: []string{"", "Jobname"}, Width: 10, Trunc: true},
		{Head: []string{"", "NDS"}, Width: 3, Right: true},
		{Head: []string{"", "GPUs"}, Width: 4, Right: true},
	}
}

// altLeadCells are altLeadCols' cells for one job.
func altLeadCells(j api.JobSummary) []cell {
	n := max(j.Nodes, 1)
	return []cell{
		{Text: j.ID}, {Text: j.User}, {Text: j.Share}, {Text: j.Name},
		{Text: strconv.Itoa(n)}, {Text: strconv.Itoa(n * j.GPUsPerNode)},
	}
}

func reasonStyle(j api.JobSummary) string {
	if j.State == api.StateFinished {
		return styleRed
	}
	return styleYellow
}

// variableList writes a job's environment as PBS's Variable_List, sorted.
func variableList(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := strings.ReplaceAll(env[k], "\n", `\n`)
		if strings.Contains(v, ",") {
			v = "'" + v + "'"
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, ",")
}

// shellQuote writes argv so that a shell would split it back.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
