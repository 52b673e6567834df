package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/jobid"
)

// qstat -f in OpenPBS's forms. A job is a list of attributes with
// OpenPBS's names and value forms (job_state letters, exec_host as
// host/slot*ncpus, exec_vnode as (host:ncpus=N:ngpus=G:mem=M), times as
// ctime(3) writes them, Resource_List.* and resources_used.*), followed by
// sharq's own under names OpenPBS does not use (partition, exec_gpus,
// preemption_count, history.N, ...). The text, JSON and DSV forms are
// written from the same list, so they cannot disagree.

// pbsVersion is the pbs_version of qstat -F json's envelope and qstat -B.
const pbsVersion = "sharq"

// pbsAttr is one attribute: Resource_List.mem is {Resource_List, mem}.
type pbsAttr struct {
	name, resource, value string
}

func (a pbsAttr) key() string {
	if a.resource == "" {
		return a.name
	}
	return a.name + "." + a.resource
}

// pbsJobAttrs lists j's attributes in the order qstat -f prints them.
func pbsJobAttrs(j *api.Job, loc *time.Location) []pbsAttr {
	var out []pbsAttr
	add := func(name, value string) { out = append(out, pbsAttr{name: name, value: value}) }
	res := func(name, resource, value string) {
		out = append(out, pbsAttr{name: name, resource: resource, value: value})
	}
	at := func(t time.Time) string { return t.In(loc).Format(pbsTime) }
	host := j.Env["PBS_O_HOST"]
	withHost := func(p string) string {
		if host == "" {
			return p
		}
		return host + ":" + p
	}
	r := j.Resources
	n := max(r.Nodes, 1)

	add("Job_Name", j.Name)
	owner := j.Owner.User
	if host != "" {
		owner += "@" + host
	}
	add("Job_Owner", owner)
	if !j.StartTime.IsZero() {
		if u := j.GPUUse; u != nil && u.Samples > 0 {
			// sharq's: the GPUs' mean and last sampled utilization
			// (percent) and peak memory (api.GPUUse).
			res("resources_used", "gpu_mem", conf.FormatSize(int64(min(u.PeakMemBytes, 1<<62))))
			res("resources_used", "gpu_util", strconv.FormatFloat(u.MeanUtil, 'f', 0, 64))
			res("resources_used", "gpu_util_recent", strconv.FormatFloat(u.RecentUtil, 'f', 0, 64))
		}
		res("resources_used", "ncpus", strconv.Itoa(n*max(r.CPUsPerNode, 1)))
		res("resources_used", "ngpus", strconv.Itoa(n*r.GPUsPerNode))
		res("resources_used", "walltime", FormatHMS(j.Used))
	}
	add("job_state", string(j.State))
	add("queue", j.Share)
	if srv := serverOf(j.ID); srv != "" {
		add("server", srv)
	}
	add("ctime", at(j.SubmitTime))
	if j.Stderr != "" {
		add("Error_Path", withHost(j.Stderr))
	}
	if len(j.Allocs) > 0 {
		add("exec_host", pbsExecHost(j.Allocs, r))
		add("exec_vnode", pbsExecVnode(j.Allocs, r))
	}
	if !j.NotBefore.IsZero() {
		add("Execution_Time", at(j.NotBefore))
	}
	hold := j.Hold
	if hold == "" {
		hold = "n"
	}
	add("Hold_Types", hold)
	join := j.Join
	if join == "" {
		join = "n"
	}
	add("Join_Path", join)
	add("Keep_Files", "n")
	add("Mail_Points", "n")
	if j.Stdout != "" {
		add("Output_Path", withHost(j.Stdout))
	}
	add("Priority", strconv.Itoa(j.PBSPriority))
	add("qtime", at(j.SubmitTime))
	add("Rerunable", "True")
	if r.MemPerNode > 0 {
		res("Resource_List", "mem", conf.FormatSize(int64(n)*r.MemPerNode))
	}
	if r.MPIProcs > 0 {
		res("Resource_List", "mpiprocs", strconv.Itoa(n*r.MPIProcs))
	}
	res("Resource_List", "ncpus", strconv.Itoa(n*max(r.CPUsPerNode, 1)))
	res("Resource_List", "ngpus", strconv.Itoa(n*r.GPUsPerNode))
	res("Resource_List", "nodect", strconv.Itoa(n))
	if r.OMPThreads > 0 {
		res("Resource_List", "ompthreads", strconv.Itoa(r.OMPThreads))
	}
	place := "free"
	if n > 1 {
		place = "scatter"
	}
	if r.Exclusive {
		place += ":excl"
	}
	if g := formatGroup(r); g != "" {
		place += ":" + g
	}
	res("Resource_List", "place", place)
	res("Resource_List", "select", formatSelect(r))
	if r.Walltime > 0 {
		res("Resource_List", "walltime", FormatHMS(r.Walltime))
	}
	if !j.StartTime.IsZero() {
		add("stime", at(j.StartTime))
	}
	if !j.EndTime.IsZero() {
		add("obittime", at(j.EndTime))
	}
	if len(j.Env) > 0 {
		add("Variable_List", variableList(j.Env))
	}
	if j.Reason != "" {
		add("comment", j.Reason)
	}
	add("run_count", strconv.Itoa(j.Runs))
	if j.ExitStatus != nil {
		add("Exit_status", strconv.Itoa(*j.ExitStatus))
	}
	if host != "" {
		add("Submit_Host", host)
	}
	if len(j.Deps) > 0 {
		add("depend", formatDepend(j.Deps))
	}
	if j.Umask != "" {
		add("umask", j.Umask)
	}
	if !j.ArrayIndices.IsZero() {
		add("array", "True")
		add("array_indices_submitted", j.ArrayIndices.Text())
		if j.ArrayMax > 0 {
			add("max_run_subjobs", strconv.Itoa(j.ArrayMax))
		}
		if st := j.ArrayStates; st != nil {
			add("array_state_count", fmt.Sprintf("Queued:%d Running:%d Exiting:%d Expired:%d", st.Queued, st.Running, st.Exiting, st.Expired))
		}
	}
	if j.ArrayParent != "" {
		add("array_id", j.ArrayParent)
		add("array_index", strconv.Itoa(j.ArrayIndex))
	}
	if j.Interactive {
		add("interactive", "True")
	}
	if e := j.Estimated; e != nil {
		res("estimated", "exec_vnode", pbsExecVnode(e.Allocs, r))
		res("estimated", "start_time", at(e.StartTime))
	}

	// sharq's own.
	add("sharq_priority", strconv.Itoa(j.Priority))
	if j.Partition != "" {
		add("partition", j.Partition)
	}
	if len(j.Domains) > 0 {
		add("topology_domains", strings.Join(j.Domains, "+"))
	}
	if len(j.Allocs) > 0 && r.GPUsPerNode > 0 {
		add("exec_gpus", execHost(j.Allocs))
	}
	if !j.RequeueAt.IsZero() {
		add("requeue_time", at(j.RequeueAt)) // unless its node comes back (NodeUnreachable)
	}
	if j.Image != "" {
		add("image", j.Image)
	}
	if j.Grace > 0 {
		add("checkpoint_grace", FormatHMS(j.Grace))
	}
	add("preemption_count", strconv.Itoa(j.Preemptions))
	if j.NodeFailures > 0 {
		add("node_failure_count", strconv.Itoa(j.NodeFailures))
	}
	if j.CheckpointNode != "" {
		add("checkpoint_node", j.CheckpointNode)
	}
	if len(j.Command) > 0 {
		add("command", shellQuote(j.Command))
	}
	for i, h := range j.History {
		res("history", strconv.Itoa(i+1), at(h.Time)+" "+string(h.State)+" "+h.What)
	}
	return out
}

// serverOf is the server part of a job id (123.lab: lab).
func serverOf(id string) string {
	p, err := jobid.Parse(id)
	if err != nil {
		return ""
	}
	return p.Server
}

// pbsExecHost writes a placement as OpenPBS's exec_host: one host/slot*ncpus
// per node (sharq's nodes are one vnode each, so the slot is 0), *ncpus
// left out for one CPU: gpu01/0*16+gpu02/0*16.
func pbsExecHost(allocs []api.Alloc, r api.Resources) string {
	cpus := max(r.CPUsPerNode, 1)
	parts := make([]string, len(allocs))
	for i, a := range allocs {
		parts[i] = a.Node + "/0"
		if cpus > 1 {
			parts[i] += "*" + strconv.Itoa(cpus)
		}
	}
	return strings.Join(parts, "+")
}

// pbsExecVnode writes a placement as OpenPBS's exec_vnode: one chunk per
// node with what the job holds there, (gpu01:ncpus=16:ngpus=4:mem=64gb).
func pbsExecVnode(allocs []api.Alloc, r api.Resources) string {
	parts := make([]string, len(allocs))
	for i, a := range allocs {
		p := "(" + a.Node + ":ncpus=" + strconv.Itoa(max(r.CPUsPerNode, 1))
		if g := len(a.GPUs); g > 0 {
			p += ":ngpus=" + strconv.Itoa(g)
		}
		if r.MemPerNode > 0 {
			p += ":mem=" + conf.FormatSize(r.MemPerNode)
		}
		parts[i] = p + ")"
	}
	return strings.Join(parts, "+")
}

// writeJobFull writes qstat -f: "Job Id: ID" and an indented
// "name = value" line per attribute, each job followed by a blank line.
func writeJobFull(w io.Writer, jobs []api.Job, sys *Sys) error {
	var b strings.Builder
	loc := sys.loc()
	for i := range jobs {
		fmt.Fprintf(&b, "Job Id: %s\n", printable(jobs[i].ID))
		for _, a := range pbsJobAttrs(&jobs[i], loc) {
			fmt.Fprintf(&b, "    %s = %s\n", a.key(), printable(a.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJobDSV writes qstat -f -F dsv: a line per job, "Job Id: ID" and
// name=value attributes separated by delim (default |); a delimiter or
// backslash inside a value is escaped with a backslash, a newline written
// as \n, as OpenPBS does.
func writeJobDSV(w io.Writer, jobs []api.Job, sys *Sys, delim string) error {
	if delim == "" {
		delim = "|"
	}
	esc := strings.NewReplacer(`\`, `\\`, delim, `\`+delim, "\n", `\n`, "\f", `\f`)
	var b strings.Builder
	loc := sys.loc()
	for i := range jobs {
		b.WriteString("Job Id: " + esc.Replace(jobs[i].ID))
		for _, a := range pbsJobAttrs(&jobs[i], loc) {
			b.WriteString(delim + a.key() + "=" + esc.Replace(a.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonNumber is the JSON number grammar: OpenPBS's qstat writes a value
// that parses as one as a number, anything else as a string.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// pbsJSONValue writes one value as OpenPBS's qstat -F json does; names
// OpenPBS keeps as strings (Job_Name, Account_Name, project) stay strings.
func pbsJSONValue(b *bytes.Buffer, name, v string) {
	if jsonNumber.MatchString(v) && name != "Job_Name" && name != "Account_Name" && name != "project" {
		b.WriteString(v)
		return
	}
	s, _ := json.Marshal(v)
	b.Write(s)
}

func jsonString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// writeJobPBSJSON writes qstat -f -F json: OpenPBS's envelope with the
// jobs under "Jobs" (writePBSJSON), Variable_List as an object of the
// job's variables.
func writeJobPBSJSON(w io.Writer, jobs []api.Job, sys *Sys) error {
	server := ""
	if len(jobs) > 0 {
		server = serverOf(jobs[0].ID)
	}
	loc := sys.loc()
	objs := make([]pbsJSONObject, len(jobs))
	for i := range jobs {
		objs[i] = pbsJSONObject{name: jobs[i].ID, attrs: pbsJobAttrs(&jobs[i], loc), env: jobs[i].Env}
	}
	return writePBSJSON(w, "Jobs", server, objs, sys)
}

// pbsJSONObject is one object of an OpenPBS JSON answer: a job or a node,
// by name, with its attributes and (a job's) variables.
type pbsJSONObject struct {
	name  string
	attrs []pbsAttr
	env   map[string]string // Variable_List's value
}

// writePBSJSON writes OpenPBS's JSON envelope, {"timestamp",
// "pbs_version", "pbs_server", SECTION: {NAME: {...}}}, each object's
// attributes in order, the resources of one name (Resource_List, ...) as
// an object.
func writePBSJSON(w io.Writer, section, server string, objs []pbsJSONObject, sys *Sys) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n    \"timestamp\":%d,\n    \"pbs_version\":", sys.now().Unix())
	jsonString(&b, pbsVersion)
	b.WriteString(",\n    \"pbs_server\":")
	jsonString(&b, server)
	b.WriteString(",\n    ")
	jsonString(&b, section)
	b.WriteString(":{")
	for i, o := range objs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n        ")
		jsonString(&b, o.name)
		b.WriteString(":{")
		attrs := o.attrs
		for k := 0; k < len(attrs); k++ {
			a := attrs[k]
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n            ")
			jsonString(&b, a.name)
			b.WriteString(":")
			switch {
			case a.resource != "":
				b.WriteString("{")
				for m := k; m < len(attrs) && attrs[m].name == a.name && attrs[m].resource != ""; m++ {
					if m > k {
						b.WriteString(",")
					}
					b.WriteString("\n                ")
					jsonString(&b, attrs[m].resource)
					b.WriteString(":")
					pbsJSONValue(&b, attrs[m].key(), attrs[m].value)
					k = m
				}
				b.WriteString("\n            }")
			case a.name == "Variable_List":
				writeJSONVariables(&b, o.env)
			default:
				pbsJSONValue(&b, a.name, a.value)
			}
		}
		b.WriteString("\n        }")
	}
	if len(objs) > 0 {
		b.WriteString("\n    ")
	}
	b.WriteString("}\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeJSONVariables writes Variable_List as OpenPBS's qstat -F json
// does: an object of the variables, sorted by name.
func writeJSONVariables(b *bytes.Buffer, env map[string]string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n                ")
		jsonString(b, k)
		b.WriteString(":")
		pbsJSONValue(b, k, env[k])
	}
	b.WriteString("\n            }")
}

// writeJobJSON writes qstat -f -F sharq-json: sharq's own job records
// (api.Job) keyed by job id, for tools written against sharq's schema.
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

// pbsTime is how PBS shows times in qstat -f (ctime(3)).
const pbsTime = "Mon Jan _2 15:04:05 2006"
