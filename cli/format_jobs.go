package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
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

// execVnode writes a reservation as PBS's exec_vnode: one parenthesised
// chunk per node with what the job asks for there,
// (gpu01:ngpus=4)+(gpu02:ngpus=4).
func execVnode(allocs []api.Alloc, r api.Resources) string {
	parts := make([]string, 0, len(allocs))
	for _, a := range allocs {
		p := "(" + a.Node
		if r.CPUsPerNode > 0 {
			p += ":ncpus=" + strconv.Itoa(r.CPUsPerNode)
		}
		p += ":ngpus=" + strconv.Itoa(len(a.GPUs))
		if r.MemPerNode > 0 {
			p += ":mem=" + conf.FormatSize(r.MemPerNode)
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "+")
}

// writeJobTableEst writes qstat -T: pending jobs with the start time the
// scheduler estimates for them (their reservation), "--" without one.
func writeJobTableEst(w io.Writer, jobs []api.JobSummary, sys *Sys) error {
	now, loc := sys.now(), sys.loc()
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: append(altLeadCols(),
		column{Head: []string{"Req'd", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "S"}, Width: 1},
		column{Head: []string{"Est", "Start"}, Width: 12, Right: true},
		column{Head: []string{"", "Reason"}, Width: 6},
	)}
	for _, j := range jobs {
		t.Rows = append(t.Rows, append(altLeadCells(j),
			cell{Text: formatHM(j.Walltime)},
			cell{Text: string(j.State), Style: stateStyle(j.State)},
			cell{Text: estStart(j.EstStart, now, loc)}, cell{Text: j.Reason, Style: reasonStyle(j)},
		))
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

// writeJobTable writes qstat's default table, PBS's columns.
func writeJobTable(w io.Writer, jobs []api.JobSummary, sys *Sys, nodes bool) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"Job id"}, Width: 16, Trunc: true, Sep: "  "},
		{Head: []string{"Name"}, Width: 16, Trunc: true},
		{Head: []string{"User"}, Width: 16, Trunc: true, Sep: "  "},
		{Head: []string{"Time Use"}, Width: 8, Right: true},
		{Head: []string{"S"}, Width: 1},
		{Head: []string{"Queue"}, Width: 5},
	}}
	for _, j := range jobs {
		t.Rows = append(t.Rows, []cell{
			{Text: j.ID}, {Text: j.Name}, {Text: j.User}, {Text: timeUse(j)},
			{Text: string(j.State), Style: stateStyle(j.State)}, {Text: j.Share},
		})
		if nodes {
			t.After = append(t.After, nodeLine(j))
		}
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
func writeJobTableAlt(w io.Writer, jobs []api.JobSummary, sys *Sys, nodes bool) error {
	now := sys.now()
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: append(altLeadCols(),
		column{Head: []string{"Req'd", "Memory"}, Width: 6, Right: true},
		column{Head: []string{"Req'd", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "S"}, Width: 1},
		column{Head: []string{"Elap", "Time"}, Width: 5, Right: true},
		column{Head: []string{"", "Reason"}, Width: 6},
	)}
	for _, j := range jobs {
		t.Rows = append(t.Rows, append(altLeadCells(j),
			cell{Text: formatSizeShort(j.MemPerNode * int64(max(j.Nodes, 1)))}, cell{Text: formatHM(j.Walltime)},
			cell{Text: string(j.State), Style: stateStyle(j.State)},
			cell{Text: formatHM(elapsed(j, now))}, cell{Text: j.Reason, Style: reasonStyle(j)},
		))
		if nodes {
			t.After = append(t.After, nodeLine(j))
		}
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

// pbsTime is how PBS shows times in qstat -f.
const pbsTime = "Mon Jan _2 15:04:05 2006"

// writeJobFull writes qstat -f: every attribute as "name = value".
func writeJobFull(w io.Writer, jobs []api.Job, sys *Sys) error {
	var b strings.Builder
	loc := sys.loc()
	at := func(t time.Time) string { return t.In(loc).Format(pbsTime) }
	for _, j := range jobs {
		attr := func(k string, v any) { fmt.Fprintf(&b, "    %s = %s\n", k, printable(fmt.Sprint(v))) }
		fmt.Fprintf(&b, "Job Id: %s\n", printable(j.ID))
		attr("Job_Name", j.Name)
		attr("Job_Owner", j.Owner.User)
		if !j.StartTime.IsZero() {
			attr("resources_used.walltime", FormatHMS(j.Used))
		}
		attr("job_state", j.State)
		attr("queue", j.Share)
		if j.Partition != "" {
			attr("partition", j.Partition)
		}
		attr("Priority", j.Priority)
		attr("ctime", at(j.SubmitTime))
		if !j.StartTime.IsZero() {
			attr("stime", at(j.StartTime))
		}
		if !j.EndTime.IsZero() {
			attr("obittime", at(j.EndTime))
		}
		if !j.NotBefore.IsZero() {
			attr("Execution_Time", at(j.NotBefore))
		}
		hold := j.Hold
		if hold == "" {
			hold = "n"
		}
		attr("Hold_Types", hold)
		r := j.Resources
		n := max(r.Nodes, 1)
		attr("Resource_List.nodect", n)
		attr("Resource_List.ngpus", n*r.GPUsPerNode)
		if r.CPUsPerNode > 0 {
			attr("Resource_List.ncpus", n*r.CPUsPerNode)
		}
		if r.MemPerNode > 0 {
			attr("Resource_List.mem", conf.FormatSize(int64(n)*r.MemPerNode))
		}
		if r.MPIProcs > 0 {
			attr("Resource_List.mpiprocs", n*r.MPIProcs)
		}
		if r.OMPThreads > 0 {
			attr("Resource_List.ompthreads", r.OMPThreads)
		}
		if r.Exclusive {
			attr("Resource_List.place", "excl")
		}
		attr("Resource_List.select", formatSelect(r))
		if r.Walltime > 0 {
			attr("Resource_List.walltime", FormatHMS(r.Walltime))
		}
		if len(j.Allocs) > 0 {
			attr("exec_host", execHost(j.Allocs))
		}
		if j.Stdout != "" {
			attr("Output_Path", j.Stdout)
		}
		if j.Stderr != "" {
			attr("Error_Path", j.Stderr)
		}
		join := j.Join
		if join == "" {
			join = "n"
		}
		attr("Join_Path", join)
		if j.Umask != "" {
			attr("umask", j.Umask)
		}
		if j.Image != "" {
			attr("image", j.Image)
		}
		if j.Grace > 0 {
			attr("checkpoint_grace", FormatHMS(j.Grace))
		}
		if len(j.Deps) > 0 {
			attr("depend", formatDepend(j.Deps))
		}
		if j.ArrayIndices != "" {
			attr("array", "True")
			attr("array_indices_submitted", j.ArrayIndices)
			if j.ArrayMax > 0 {
				attr("max_run_subjobs", j.ArrayMax)
			}
			if st := j.ArrayStates; st != nil {
				attr("array_state_count", fmt.Sprintf("Queued:%d Running:%d Exiting:%d Expired:%d", st.Queued, st.Running, st.Exiting, st.Expired))
			}
		}
		if j.ArrayParent != "" {
			attr("array_id", j.ArrayParent)
			attr("array_index", j.ArrayIndex)
		}
		if j.Reason != "" {
			attr("comment", j.Reason)
		}
		if !j.RequeueAt.IsZero() {
			attr("requeue_time", at(j.RequeueAt)) // unless its node comes back (NodeUnreachable)
		}
		if e := j.Estimated; e != nil {
			attr("estimated.exec_vnode", execVnode(e.Allocs, r))
			attr("estimated.start_time", at(e.StartTime))
		}
		if j.ExitStatus != nil {
			attr("Exit_status", *j.ExitStatus)
		}
		attr("preemption_count", j.Preemptions)
		if j.NodeFailures > 0 {
			attr("node_failure_count", j.NodeFailures)
		}
		if j.CheckpointNode != "" {
			attr("checkpoint_node", j.CheckpointNode)
		}
		if j.Interactive {
			attr("interactive", "True") // PBS's attribute
		}
		if len(j.Command) > 0 {
			attr("command", shellQuote(j.Command))
		}
		if len(j.Env) > 0 {
			attr("Variable_List", variableList(j.Env))
		}
		for i, h := range j.History {
			attr(fmt.Sprintf("history.%d", i+1), at(h.Time)+" "+string(h.State)+" "+h.What)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// writeJobJSON writes qstat -f -F json: PBS's layout, with the api.Job
// records keyed by job id.
func writeJobJSON(w io.Writer, jobs []api.Job, sys *Sys) error {
	doc := struct {
		Timestamp int64              `json:"timestamp"`
		Jobs      map[string]api.Job `json:"Jobs"`
	}{Timestamp: sys.now().Unix(), Jobs: make(map[string]api.Job, len(jobs))}
	for _, j := range jobs {
		doc.Jobs[j.ID] = j
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(doc)
}
