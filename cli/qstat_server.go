package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// serverStatus is what qstat -B shows of the one server sharq has.
type serverStatus struct {
	name, defaultQueue string
	total              int
	count              map[api.State]int
}

// attrs are its attributes with OpenPBS's names (qstat -B -f).
func (s serverStatus) attrs() []pbsAttr {
	c := s.count
	out := []pbsAttr{
		{name: "server_state", value: "Active"},
		{name: "total_jobs", value: strconv.Itoa(s.total)},
		{name: "state_count", value: fmt.Sprintf("Transit:0 Queued:%d Held:%d Waiting:%d Running:%d Exiting:%d Begun:%d",
			c[api.StateQueued], c[api.StateHeld], c[api.StateWaiting], c[api.StateRunning], c[api.StateExiting], c[api.StateArray])},
	}
	if s.defaultQueue != "" {
		out = append(out, pbsAttr{name: "default_queue", value: s.defaultQueue})
	}
	return append(out, pbsAttr{name: "pbs_version", value: pbsVersion})
}

// clusterNames are the cluster's name (PBS's server name) and default
// share, from its configuration; "" when it cannot be read.
func clusterNames(ctx context.Context, sys *Sys) (name, defaultShare string) {
	cr, err := call(ctx, sys, api.Request{Op: api.OpConfig})
	if err != nil {
		return "", ""
	}
	cfg, err := conf.Parse("", []byte(cr.Text))
	if err != nil {
		return "", ""
	}
	return cfg.Cluster.Name, cfg.Cluster.DefaultShare
}

// qstatServer writes qstat -B: the server's jobs by state. Server names
// given as operands are not checked: a sharq client reaches one server.
func qstatServer(ctx context.Context, sys *Sys, o *qstatOpts, _ []string) error {
	resp, err := call(ctx, sys, api.Request{Op: api.OpStat, Stat: &api.StatFilter{Summary: true}})
	if err != nil {
		return err
	}
	rows, err := api.ParseSummaries(string(resp.Summary))
	if err != nil {
		return err
	}
	st := serverStatus{count: map[api.State]int{}}
	for _, r := range rows {
		st.total++
		st.count[r.State]++
		if st.name == "" {
			st.name = serverOf(r.ID)
		}
	}
	if name, def := clusterNames(ctx, sys); name != "" {
		st.name, st.defaultQueue = name, def
	}
	if !o.full {
		return writeServerTable(sys.Stdout, st)
	}
	if o.format == formatSharqJSON {
		return usagef("-F sharq-json is for jobs")
	}
	return writePBSFull(sys.Stdout, "Server", st.name, []pbsJSONObject{{name: st.name, attrs: st.attrs()}}, sys, o.format, o.delim)
}

// writePBSFull writes the full form of OpenPBS objects (qstat -B -f,
// qstat -Q -f): "LABEL: NAME" and its attributes, as text, as DSV
// (LABEL: NAME|key=value...) or as OpenPBS's JSON (writePBSJSON, the
// objects under LABEL).
func writePBSFull(w io.Writer, label, server string, objs []pbsJSONObject, sys *Sys, format, delim string) error {
	if format == formatJSON {
		return writePBSJSON(w, label, server, objs, sys)
	}
	var b strings.Builder
	for _, o := range objs {
		if format == formatDSV {
			if delim == "" {
				delim = "|"
			}
			b.WriteString(label + ": " + o.name)
			for _, a := range o.attrs {
				b.WriteString(delim + a.key() + "=" + a.value)
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString(label + ": " + printable(o.name) + "\n")
		for _, a := range o.attrs {
			fmt.Fprintf(&b, "    %s = %s\n", a.key(), printable(a.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeServerTable writes qstat -B's table, OpenPBS's columns.
func writeServerTable(w io.Writer, st serverStatus) error {
	c := st.count
	name := printable(st.name)
	if len(name) > 16 {
		name = name[:15] + "*"
	}
	var b strings.Builder
	b.WriteString("Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n")
	b.WriteString("---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n")
	fmt.Fprintf(&b, "%-16s %5d %5d %5d %5d %5d %5d %5d %5d %s\n", name, 0, st.total,
		c[api.StateQueued], c[api.StateRunning]+c[api.StateArray], c[api.StateHeld], c[api.StateWaiting], 0, c[api.StateExiting], "Active")
	_, err := io.WriteString(w, b.String())
	return err
}

// shareAttrs are a share's attributes as qstat -Q -f shows them: OpenPBS's
// queue attributes, then sharq's own (its quota, borrowing and lending).
func shareAttrs(s api.ShareStatus) []pbsAttr {
	on := "True"
	if s.State != "ENABLED" {
		on = "False"
	}
	return []pbsAttr{
		{name: "queue_type", value: "Execution"},
		{name: "total_jobs", value: strconv.Itoa(s.Pending + s.Running)},
		{name: "state_count", value: fmt.Sprintf("Transit:0 Queued:%d Held:0 Waiting:0 Running:%d Exiting:0 Begun:0", s.Pending, s.Running)},
		{name: "resources_assigned", resource: "ngpus", value: strconv.Itoa(s.InUse)},
		{name: "enabled", value: on},
		{name: "started", value: on},
		{name: "partition", value: s.Partition},
		{name: "strategy", value: s.Strategy},
		{name: "share_state", value: s.State},
		{name: "gpu_quota", value: strconv.Itoa(s.Quota)},
		{name: "gpus_borrowed", value: strconv.Itoa(s.Borrowed)},
		{name: "gpus_lent", value: strconv.Itoa(s.Lent)},
		{name: "borrow_limit", value: strconv.Itoa(s.BorrowLimit)},
		{name: "preemption_count", value: strconv.Itoa(s.Preemptions)},
		{name: "fair_usage_gpu_h", value: strconv.FormatFloat(s.FairUsage, 'f', -1, 64)},
	}
}

// writeSharesFull writes qstat -Q -f: "Queue: NAME" and its attributes,
// as text, DSV or OpenPBS's JSON (writePBSFull).
func writeSharesFull(w io.Writer, shares []api.ShareStatus, server string, sys *Sys, format, delim string) error {
	if format == formatSharqJSON {
		return usagef("-F sharq-json is for jobs")
	}
	objs := make([]pbsJSONObject, len(shares))
	for i, s := range shares {
		objs[i] = pbsJSONObject{name: s.Name, attrs: shareAttrs(s)}
	}
	return writePBSFull(w, "Queue", server, objs, sys, format, delim)
}
