package acct

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Detail is what a job was beyond its accounting: what its owner submitted
// (script, command, environment, dependencies, paths and options) and its
// step-by-step event log, so that qstat -x shows a job the controller's
// spool no longer holds as it showed the live one. Script, Command, Shell
// and Env may hold secrets: the controller shows them to the job's owner
// and admins only, as for a live job. Jobs reads it only when asked
// (JobFilter.Detail): a report over many jobs does not load every script.
type Detail struct {
	Script  string
	Shell   string
	Command []string
	Env     map[string]string
	Deps    []Dep
	Events  []Event

	WorkDir, Stdout, Stderr string
	Join, Umask, Image      string
	Grace                   time.Duration
	NotBefore               time.Time
	Interactive             bool
	Priority, PBSPriority   int
	ArrayMax                int
	Labels                  map[string]string
	Exclusive               bool
	MPIProcs, OMPThreads    int
	NodeFailures            int
	// Group, GroupPreferred and GroupWait are its topology request
	// (place=group=); Domains are the domains its last run sat in.
	Group          string
	GroupPreferred bool
	GroupWait      time.Duration
	Domains        []string
}

// Dep is one dependency: its type as qsub -W depend writes it ("afterok")
// and the job it is on.
type Dep struct {
	Type, On string
}

// Event is one entry of a job's event log.
type Event struct {
	Time  time.Time
	State string // the job's state after it ("R")
	What  string // "started on gpu01 [0 1]"
}

// Bounds of a Detail: the store refuses larger ones. They are those of the
// controller's job record, which holds all of it: a record is at most
// MaxDetailLen bytes (the spool's record limit, spool.MaxRecordSize), it
// keeps at most 201 events (the first and the latest 200) and 1024
// dependencies, and qsub takes at most 4096 environment variables and
// arguments. Counting the strings' bytes (not their encoding) lets a job
// the spool held always fit.
const (
	MaxDetailLen = 1 << 20
	MaxEvents    = 256
	MaxDeps      = 1024
	MaxEnvVars   = 4096
	MaxArgs      = 4096
	MaxLabels    = 4096
)

// Len is the number of bytes of d's strings, which MaxDetailLen bounds.
func (d *Detail) Len() int {
	n := len(d.Script) + len(d.Shell) + len(d.WorkDir) + len(d.Stdout) + len(d.Stderr) + len(d.Join) +
		len(d.Umask) + len(d.Image) + len(d.Group)
	for _, l := range [][]string{d.Command, d.Domains} {
		for _, a := range l {
			n += len(a)
		}
	}
	for _, m := range []map[string]string{d.Env, d.Labels} {
		for k, v := range m {
			n += len(k) + len(v)
		}
	}
	for _, x := range d.Deps {
		n += len(x.Type) + len(x.On)
	}
	for _, e := range d.Events {
		n += len(e.State) + len(e.What)
	}
	return n
}

// validate checks d's bounds, and that its strings are text PostgreSQL
// stores (UTF-8 without NUL bytes).
func (d *Detail) validate(id string) error {
	switch {
	case len(d.Events) > MaxEvents || len(d.Deps) > MaxDeps || len(d.Env) > MaxEnvVars ||
		len(d.Command) > MaxArgs || len(d.Labels) > MaxLabels || len(d.Domains) > MaxArgs:
		return fmt.Errorf("%w: job %s: %d events, %d dependencies, %d variables, %d arguments, %d labels", ErrInvalid,
			id, len(d.Events), len(d.Deps), len(d.Env), len(d.Command), len(d.Labels))
	case d.Len() > MaxDetailLen:
		return fmt.Errorf("%w: job %s: %d bytes of script, environment and events; at most %d", ErrInvalid, id,
			d.Len(), MaxDetailLen)
	case !text(d.Script):
		return fmt.Errorf("%w: job %s: the script is not text", ErrInvalid, id)
	}
	return nil
}

// text: valid UTF-8 without NUL bytes (what a TEXT column holds).
func text(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// The Detail is stored in five columns: script as it is, env, deps and
// events as JSON, and the rest (detailSpec) as one JSON object. JSON
// escapes what a TEXT column could not hold; times are Unix milliseconds
// as in every other column.
type detailSpec struct {
	Shell        string            `json:"shell,omitempty"`
	Command      []string          `json:"command,omitempty"`
	WorkDir      string            `json:"workdir,omitempty"`
	Stdout       string            `json:"stdout,omitempty"`
	Stderr       string            `json:"stderr,omitempty"`
	Join         string            `json:"join,omitempty"`
	Umask        string            `json:"umask,omitempty"`
	Image        string            `json:"image,omitempty"`
	GraceMS      int64             `json:"grace_ms,omitempty"`
	NotBeforeMS  int64             `json:"not_before_ms,omitempty"`
	Interactive  bool              `json:"interactive,omitempty"`
	Priority     int               `json:"priority,omitempty"`
	PBSPriority  int               `json:"pbs_priority,omitempty"`
	ArrayMax     int               `json:"array_max,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Exclusive    bool              `json:"exclusive,omitempty"`
	MPIProcs     int               `json:"mpiprocs,omitempty"`
	OMPThreads   int               `json:"ompthreads,omitempty"`
	NodeFailures int               `json:"node_failures,omitempty"`
	Group        string            `json:"group,omitempty"`
	GroupPref    bool              `json:"group_preferred,omitempty"`
	GroupWaitMS  int64             `json:"group_wait_ms,omitempty"`
	Domains      []string          `json:"domains,omitempty"`
}

type storedDep struct {
	Type string `json:"type"`
	On   string `json:"on"`
}

type storedEvent struct {
	TimeMS int64  `json:"t"`
	State  string `json:"s"`
	What   string `json:"w"`
}

// detailColumns are the Detail's columns, in the order encode writes them.
const detailColumns = `script, env, deps, events, spec`

// jsonText is v as JSON, or "" when n (its length) is 0.
func jsonText(n int, v any) string {
	if n == 0 {
		return ""
	}
	b, _ := json.Marshal(v) // strings, numbers and maps of strings always encode
	return string(b)
}

// encode writes d's columns.
func (d *Detail) encode() (script, env, deps, events, spec string) {
	ds := make([]storedDep, len(d.Deps))
	for i, x := range d.Deps {
		ds[i] = storedDep(x)
	}
	es := make([]storedEvent, len(d.Events))
	for i, e := range d.Events {
		es[i] = storedEvent{ms(e.Time), e.State, e.What}
	}
	sp := detailSpec{Shell: d.Shell, Command: d.Command, WorkDir: d.WorkDir, Stdout: d.Stdout, Stderr: d.Stderr,
		Join: d.Join, Umask: d.Umask, Image: d.Image, GraceMS: d.Grace.Milliseconds(), NotBeforeMS: ms(d.NotBefore),
		Interactive: d.Interactive, Priority: d.Priority, PBSPriority: d.PBSPriority, ArrayMax: d.ArrayMax,
		Labels: d.Labels, Exclusive: d.Exclusive, MPIProcs: d.MPIProcs, OMPThreads: d.OMPThreads,
		NodeFailures: d.NodeFailures, Group: d.Group, GroupPref: d.GroupPreferred, GroupWaitMS: d.GroupWait.Milliseconds(),
		Domains: d.Domains}
	if b, _ := json.Marshal(sp); string(b) != "{}" {
		spec = string(b)
	}
	return d.Script, jsonText(len(d.Env), d.Env), jsonText(len(ds), ds), jsonText(len(es), es), spec
}

// decodeDetail reads encode's columns; a row written before the columns
// existed has them all empty and reads as the zero Detail.
func decodeDetail(script, env, deps, events, spec string) (Detail, error) {
	d := Detail{Script: script}
	var ds []storedDep
	var es []storedEvent
	var sp detailSpec
	for _, c := range []struct {
		name, text string
		v          any
	}{{"env", env, &d.Env}, {"deps", deps, &ds}, {"events", events, &es}, {"spec", spec, &sp}} {
		if c.text == "" {
			continue
		}
		if err := json.Unmarshal([]byte(c.text), c.v); err != nil {
			return Detail{}, fmt.Errorf("%w: %s column: %v", ErrCorrupt, c.name, err)
		}
	}
	for _, x := range ds {
		d.Deps = append(d.Deps, Dep(x))
	}
	for _, e := range es {
		d.Events = append(d.Events, Event{fromMS(e.TimeMS), e.State, e.What})
	}
	if len(d.Env) == 0 {
		d.Env = nil
	}
	d.Shell, d.Command, d.WorkDir, d.Stdout, d.Stderr = sp.Shell, sp.Command, sp.WorkDir, sp.Stdout, sp.Stderr
	d.Join, d.Umask, d.Image = sp.Join, sp.Umask, sp.Image
	d.Grace, d.NotBefore = time.Duration(sp.GraceMS)*time.Millisecond, fromMS(sp.NotBeforeMS)
	d.Interactive, d.Priority, d.PBSPriority, d.ArrayMax = sp.Interactive, sp.Priority, sp.PBSPriority, sp.ArrayMax
	d.Labels, d.Exclusive, d.MPIProcs, d.OMPThreads = sp.Labels, sp.Exclusive, sp.MPIProcs, sp.OMPThreads
	d.NodeFailures = sp.NodeFailures
	d.Group, d.GroupPreferred, d.GroupWait = sp.Group, sp.GroupPref, time.Duration(sp.GroupWaitMS)*time.Millisecond
	if len(sp.Domains) > 0 {
		d.Domains = sp.Domains
	}
	if len(d.Command) == 0 {
		d.Command = nil
	}
	if len(d.Labels) == 0 {
		d.Labels = nil
	}
	return d, nil
}
