package sim

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ITP trace conversion. The Microsoft ITP trace (ElasticFlow artifact) has
// the columns cluster,job_id,submission_time,duration,num_gpu (seconds and
// GPU counts as integers). ReadITP turns each row into a job of the share
// named after its cluster, priority ITPPriority; a job of more than
// ITPNodeGPUs GPUs becomes a multi-node job of num_gpu/ITPNodeGPUs nodes
// with ITPNodeGPUs GPUs each.
const (
	ITPPriority = 100
	ITPNodeGPUs = 8
)

var itpColumns = []string{"cluster", "job_id", "submission_time", "duration", "num_gpu"}

// ReadITP reads an ITP trace (gzipped or not) and returns its jobs sorted
// by submission time, rows with equal times in file order. Bad rows are
// reported with their line numbers in a *TraceError; a trace without rows
// is ErrEmptyTrace.
func ReadITP(r io.Reader) ([]TraceJob, error) {
	in, err := OpenMaybeGzip(r)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var errs rowErrors
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: ITP header: %v", ErrBadHeader, err)
	}
	col := make(map[string]int)
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))] = i
	}
	for _, c := range itpColumns {
		if _, ok := col[c]; !ok {
			errs.add(1, c, ErrMissingColumn)
		}
	}
	if err := errs.err(""); err != nil {
		return nil, err
	}
	var jobs []TraceJob
	seen := make(map[string]int)
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
		if len(rec) != len(header) {
			errs.add(line, "", fmt.Errorf("%w: %d, header has %d", ErrFieldCount, len(rec), len(header)))
			continue
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		ok := true
		num := func(c string, lo int64) int64 {
			v, err := strconv.ParseInt(get(c), 10, 64)
			if err != nil {
				errs.add(line, c, fmt.Errorf("%w: %q", ErrBadNumber, get(c)))
				ok = false
			} else if v < lo || v > maxSeconds {
				errs.add(line, c, fmt.Errorf("%w: %d", ErrOutOfRange, v))
				ok = false
			}
			return v
		}
		j := TraceJob{Line: line, Priority: ITPPriority, Nodes: 1, Grace: -1}
		j.Share = get("cluster")
		j.ID = get("job_id")
		for _, c := range []string{"cluster", "job_id"} {
			if s := get(c); s == "" || !validName(s) {
				errs.add(line, c, fmt.Errorf("%w: %q", ErrEmptyField, s))
				ok = false
			}
		}
		j.Submit = time.Duration(num("submission_time", 0)) * time.Second
		j.Duration = time.Duration(num("duration", 1)) * time.Second
		gpus := int(num("num_gpu", 1))
		switch {
		case !ok:
		case gpus <= ITPNodeGPUs:
			j.GPUs = gpus
		case gpus%ITPNodeGPUs == 0 && gpus/ITPNodeGPUs <= MaxNodes:
			j.GPUs, j.Nodes = ITPNodeGPUs, gpus/ITPNodeGPUs
		default:
			errs.add(line, "num_gpu", fmt.Errorf("%w: %d GPUs is not a multiple of %d", ErrOutOfRange, gpus, ITPNodeGPUs))
			ok = false
		}
		if !ok {
			continue
		}
		if prev, dup := seen[j.ID]; dup {
			errs.add(line, "job_id", fmt.Errorf("%w %q (first on line %d)", ErrDuplicateJob, j.ID, prev))
			continue
		}
		seen[j.ID] = line
		jobs = append(jobs, j)
	}
	if err := errs.err(""); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		// What DecodeTrace refuses: the converted trace could not be run.
		return nil, ErrEmptyTrace
	}
	slices.SortStableFunc(jobs, func(a, b TraceJob) int {
		return cmp.Compare(a.Submit, b.Submit)
	})
	return jobs, nil
}

// ShareDemand is a share's total demand in a trace.
type ShareDemand struct {
	Share    string
	Jobs     int
	GPUHours float64
	MaxGPUs  int // the largest job
}

// Demand sums each share's demand (GPUs x duration), shares by name.
func Demand(jobs []TraceJob) []ShareDemand {
	idx := make(map[string]int)
	var out []ShareDemand
	for i := range jobs {
		j := &jobs[i]
		k, ok := idx[j.Share]
		if !ok {
			k = len(out)
			idx[j.Share] = k
			out = append(out, ShareDemand{Share: j.Share})
		}
		d := &out[k]
		d.Jobs++
		d.GPUHours += float64(j.TotalGPUs()) * j.Duration.Hours()
		d.MaxGPUs = max(d.MaxGPUs, j.TotalGPUs())
	}
	slices.SortFunc(out, func(a, b ShareDemand) int { return strings.Compare(a.Share, b.Share) })
	return out
}

// Quotas divides total GPUs among the shares in proportion to their
// GPU-hours by the largest-remainder method: the quotas sum to exactly
// total (when there is any demand). Ties go to the earlier share.
func Quotas(demand []ShareDemand, total int) []int {
	var sum float64
	for _, d := range demand {
		sum += d.GPUHours
	}
	q := make([]int, len(demand))
	if sum <= 0 {
		return q
	}
	rem := make([]float64, len(demand))
	given := 0
	for i, d := range demand {
		exact := float64(total) * d.GPUHours / sum
		q[i] = int(exact)
		rem[i] = exact - float64(q[i])
		given += q[i]
	}
	order := make([]int, len(demand))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for k := 0; given < total; k++ {
		q[order[k%len(order)]]++
		given++
	}
	return q
}
