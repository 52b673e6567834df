package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A job summary is what qstat's tables need of a job, as one line of
// tab-separated fields. A listing of 100,000 jobs as JSON objects takes
// seconds to encode and decode; as summary lines it takes tens of
// milliseconds. Fields, in order:
//
//	id name user state queue used_ns start_unix_ns end_unix_ns nodes
//	gpus_per_node mem_per_node walltime_ns reason exec_host array_parent
//	est_start_unix_ns
//
// exec_host is "node/0,1+node2/0,1". Text fields escape backslash, tab and
// newline as \\, \t and \n.
const summaryFields = 16

// JobSummary is the part of a Job that qstat's tables show.
type JobSummary struct {
	ID, Name, User     string
	State              State
	Share              string
	Used               time.Duration
	StartTime, EndTime time.Time
	Nodes, GPUsPerNode int
	MemPerNode         int64
	Walltime           time.Duration
	Reason             string
	Allocs             []Alloc
	ArrayParent        string
	// EstStart is a pending job's estimated start (its reservation); zero
	// without one.
	EstStart time.Time
}

// SummaryOf is j's summary.
func SummaryOf(j *Job) JobSummary {
	return JobSummary{ID: j.ID, Name: j.Name, User: j.Owner.User, State: j.State, Share: j.Share, Used: j.Used,
		StartTime: j.StartTime, EndTime: j.EndTime, Nodes: j.Resources.Nodes, GPUsPerNode: j.Resources.GPUsPerNode,
		MemPerNode: j.Resources.MemPerNode, Walltime: j.Resources.Walltime, Reason: j.Reason, Allocs: j.Allocs,
		ArrayParent: j.ArrayParent, EstStart: j.Estimated.start()}
}

// start is the estimated start time, zero for nil.
func (e *Estimated) start() time.Time {
	if e == nil {
		return time.Time{}
	}
	return e.StartTime
}

// ErrSummary is returned for a malformed summary line.
var ErrSummary = errors.New("malformed job summary")

// AppendSummary appends j's summary line (with its newline) to b.
func AppendSummary(b []byte, j *Job) []byte {
	b = appendText(b, j.ID)
	b = appendText(append(b, '\t'), j.Name)
	b = appendText(append(b, '\t'), j.Owner.User)
	b = appendText(append(b, '\t'), string(j.State))
	b = appendText(append(b, '\t'), j.Share)
	b = strconv.AppendInt(append(b, '\t'), int64(j.Used), 10)
	b = appendTime(append(b, '\t'), j.StartTime)
	b = appendTime(append(b, '\t'), j.EndTime)
	b = strconv.AppendInt(append(b, '\t'), int64(j.Resources.Nodes), 10)
	b = strconv.AppendInt(append(b, '\t'), int64(j.Resources.GPUsPerNode), 10)
	b = strconv.AppendInt(append(b, '\t'), j.Resources.MemPerNode, 10)
	b = strconv.AppendInt(append(b, '\t'), int64(j.Resources.Walltime), 10)
	b = appendText(append(b, '\t'), j.Reason)
	b = append(b, '\t')
	for i, a := range j.Allocs {
		if i > 0 {
			b = append(b, '+')
		}
		b = appendText(b, a.Node)
		b = append(b, '/')
		for k, g := range a.GPUs {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(g), 10)
		}
	}
	b = appendText(append(b, '\t'), j.ArrayParent)
	b = appendTime(append(b, '\t'), j.Estimated.start())
	return append(b, '\n')
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return strconv.AppendInt(b, t.UnixNano(), 10)
}

var textEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)
var textUnescaper = strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n")

func appendText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '\t' || c == '\n' {
			return append(b, textEscaper.Replace(s)...)
		}
	}
	return append(b, s...)
}

func parseText(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return textUnescaper.Replace(s)
}

// ParseSummaries reads summary lines back.
func ParseSummaries(s string) ([]JobSummary, error) {
	out := make([]JobSummary, strings.Count(s, "\n"))
	i := 0
	for ; len(s) > 0; i++ {
		line := s
		if k := strings.IndexByte(s, '\n'); k >= 0 {
			line, s = s[:k], s[k+1:]
		} else {
			s = ""
		}
		if i == len(out) {
			out = append(out, JobSummary{})
		}
		if err := parseSummary(line, &out[i]); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrSummary, i+1, err)
		}
	}
	return out[:i], nil
}

func parseSummary(line string, j *JobSummary) error {
	var f [summaryFields]string
	for i := range f {
		k := strings.IndexByte(line, '\t')
		switch {
		case k < 0 && i < summaryFields-1:
			return fmt.Errorf("%d fields, want %d", i+1, summaryFields)
		case k >= 0 && i == summaryFields-1:
			return fmt.Errorf("more than %d fields", summaryFields)
		case k < 0:
			f[i] = line
		default:
			f[i], line = line[:k], line[k+1:]
		}
	}
	var err error
	num := func(s string) int64 {
		if err != nil || s == "" {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(s, 10, 64)
		return v
	}
	tm := func(s string) time.Time {
		if v := num(s); v != 0 {
			return time.Unix(0, v)
		}
		return time.Time{}
	}
	j.ID, j.Name, j.User = parseText(f[0]), parseText(f[1]), parseText(f[2])
	j.State, j.Share = State(parseText(f[3])), parseText(f[4])
	j.Used = time.Duration(num(f[5]))
	j.StartTime, j.EndTime = tm(f[6]), tm(f[7])
	j.Nodes, j.GPUsPerNode, j.MemPerNode = int(num(f[8])), int(num(f[9])), num(f[10])
	j.Walltime = time.Duration(num(f[11]))
	j.Reason = parseText(f[12])
	if f[13] != "" {
		for part := range strings.SplitSeq(f[13], "+") {
			node, gpus, ok := strings.Cut(part, "/")
			if !ok {
				return fmt.Errorf("exec host %q", part)
			}
			a := Alloc{Node: parseText(node)}
			if gpus != "" {
				for g := range strings.SplitSeq(gpus, ",") {
					a.GPUs = append(a.GPUs, int(num(g)))
				}
			}
			j.Allocs = append(j.Allocs, a)
		}
	}
	j.ArrayParent = parseText(f[14])
	j.EstStart = tm(f[15])
	return err
}
