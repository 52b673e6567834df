package sim

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// An actions file says what happens to a simulation beyond jobs arriving
// and ending: users cancelling, holding, releasing and re-prioritising
// jobs, and nodes going down, coming up, being drained and resumed. It is a
// CSV file with a header line, gzipped or not; '#' starts a comment:
//
//	t_s,action,target,value
//	120,hold,j7,
//	300,release,j7,
//	400,prio,j9,50
//	500,cancel,j3,
//	600,down,n1,
//	900,up,n1,
//	950,drain,n2,
//	990,resume,n2,
//
// t_s is the virtual time in seconds from the trace's origin; target is a
// job of the trace (cancel, hold, release, prio) or a node of the cluster
// (down, up, drain, resume); value is the new priority for prio and empty
// otherwise (the column may be left out when no row needs it). Actions due
// at the same time as trace events are applied after them, in file order.

// ActionKind is what an action does.
type ActionKind uint8

const (
	ActCancel  ActionKind = iota // qdel: a pending job leaves, a running one is stopped (SIGTERM, its grace, exit)
	ActHold                      // qhold: a pending job is held (refused for any other)
	ActRelease                   // qrls: the user hold is cleared
	ActPrio                      // qalter -p: the job's priority becomes value
	ActDown                      // the node dies: its jobs lose their work since their last checkpoint and are requeued
	ActUp                        // the node comes (back) up
	ActDrain                     // no new jobs start on the node; running ones go on
	ActResume                    // the drain is lifted
)

var actionNames = [...]string{ActCancel: "cancel", ActHold: "hold", ActRelease: "release", ActPrio: "prio",
	ActDown: "down", ActUp: "up", ActDrain: "drain", ActResume: "resume"}

func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return fmt.Sprintf("ActionKind(%d)", k)
}

// onNode says whether the action's target is a node (else a job).
func (k ActionKind) onNode() bool { return k >= ActDown }

// Action is one row of an actions file.
type Action struct {
	Line   int // 1-based line in the file
	At     time.Duration
	Kind   ActionKind
	Target string // a job id or a node name
	Value  int    // the priority of ActPrio
}

// Actions file columns.
const (
	colActAt     = "t_s"
	colActKind   = "action"
	colActTarget = "target"
	colActValue  = "value"
)

// MaxActions bounds an actions file.
const MaxActions = 1_000_000

// ErrTooManyActions is returned for an actions file with more than
// MaxActions rows.
var ErrTooManyActions = errors.New("too many actions")

// ErrUnknownTarget is a RowError's sentinel for an action on a job the
// trace lacks or a node the cluster lacks.
var ErrUnknownTarget = errors.New("unknown target")

// LoadActions reads an actions file (see DecodeActions); errors name the
// file.
func LoadActions(path string) ([]Action, error) { return loadTable(path, "actions", DecodeActions) }

// DecodeActions reads an actions file. Every bad row is reported, up to
// MaxRowErrors, in a *TraceError. Actions come back in file order; an
// empty file (a header only) is valid.
func DecodeActions(r io.Reader) ([]Action, error) {
	var errs rowErrors
	cr, header, err := openTable(r, &errs)
	if err != nil {
		return nil, err
	}
	idx, ok := parseHeader(header, cr, []string{colActAt, colActKind, colActTarget}, []string{colActValue}, &errs)
	if !ok {
		return nil, errs.err("")
	}
	ncols := len(header)

	var acts []Action
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs.add(csvLine(err), "", fmt.Errorf("%w: %v", ErrSyntax, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != ncols {
			errs.add(line, "", fmt.Errorf("%w: %d, header has %d", ErrFieldCount, len(rec), ncols))
			continue
		}
		if len(acts) >= MaxActions {
			return nil, fmt.Errorf("line %d: %w (at most %d)", line, ErrTooManyActions, MaxActions)
		}
		if a, ok := parseAction(rec, idx, line, &errs); ok {
			acts = append(acts, a)
		}
	}
	if err := errs.err(""); err != nil {
		return nil, err
	}
	return acts, nil
}

func parseAction(rec []string, idx map[string]int, line int, errs *rowErrors) (Action, bool) {
	a := Action{Line: line}
	ok := true
	bad := func(col string, err error) {
		errs.add(line, col, err)
		ok = false
	}
	field := func(col string) string {
		if i := idx[col]; i >= 0 {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	if s := field(colActAt); s == "" {
		bad(colActAt, ErrEmptyField)
	} else if d, err := parseSeconds(s); err != nil {
		bad(colActAt, err)
	} else {
		a.At = d
	}
	kind := field(colActKind)
	found := false
	for k, n := range actionNames {
		if n == kind {
			a.Kind, found = ActionKind(k), true
		}
	}
	if !found {
		bad(colActKind, fmt.Errorf("%w: %q is not one of %s", ErrOutOfRange, kind, strings.Join(actionNames[:], ", ")))
	}
	a.Target = field(colActTarget)
	switch {
	case a.Target == "":
		bad(colActTarget, ErrEmptyField)
	case !validName(a.Target):
		bad(colActTarget, fmt.Errorf("%w: %q has control characters or invalid UTF-8", ErrOutOfRange, a.Target))
	}
	v := field(colActValue)
	switch {
	case found && a.Kind == ActPrio && v == "":
		bad(colActValue, fmt.Errorf("%w: prio needs the new priority", ErrEmptyField))
	case found && a.Kind == ActPrio:
		n, err := strconv.Atoi(v)
		if err != nil {
			bad(colActValue, fmt.Errorf("%w: %q", ErrBadNumber, v))
		} else if n < 0 || n > MaxPriority {
			bad(colActValue, fmt.Errorf("%w: %d not in 0..%d", ErrOutOfRange, n, MaxPriority))
		}
		a.Value = n
	case v != "":
		bad(colActValue, fmt.Errorf("%w: only prio takes a value", ErrOutOfRange))
	}
	return a, ok
}

// ValidateActions checks that every action names a job of the trace or a
// node of the cluster.
func ValidateActions(c *Cluster, jobs []TraceJob, acts []Action) error {
	ids := make(map[string]bool, len(jobs))
	for i := range jobs {
		ids[jobs[i].ID] = true
	}
	nodes := make(map[string]bool, len(c.Sched.Nodes))
	for _, n := range c.Sched.Nodes {
		nodes[n.Name] = true
	}
	var errs rowErrors
	for _, a := range acts {
		if a.Kind.onNode() && !nodes[a.Target] {
			errs.add(a.Line, colActTarget, fmt.Errorf("%w: node %q is not in the cluster", ErrUnknownTarget, a.Target))
		}
		if !a.Kind.onNode() && !ids[a.Target] {
			errs.add(a.Line, colActTarget, fmt.Errorf("%w: job %q is not in the trace", ErrUnknownTarget, a.Target))
		}
	}
	return errs.err("")
}
