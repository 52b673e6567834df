package acct

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Outcome is how a job ended, as reports filter it.
type Outcome string

const (
	Completed Outcome = "completed" // exit status 0
	Failed    Outcome = "failed"    // non-zero exit, or failed by the scheduler
	Deleted   Outcome = "deleted"   // qdel
)

// ParseOutcome reads an outcome name.
func ParseOutcome(s string) (Outcome, error) {
	switch o := Outcome(s); o {
	case Completed, Failed, Deleted:
		return o, nil
	}
	return "", fmt.Errorf("%w: state %q (want completed, failed or deleted)", ErrInvalid, s)
}

// Alloc is the part of a job on one node: the node and its GPU indices.
type Alloc struct {
	Node string
	GPUs []int
}

// Record is one finished job in the history.
type Record struct {
	ID           string // "12.lab", "12[3].lab", "12[].lab"
	Seq          uint64
	ArrayParent  string // on a subjob
	ArrayIndex   int    // on a subjob
	ArrayIndices string // on an array parent ("0-99"); its subjobs carry the usage
	Name         string
	User         string
	UID, GID     uint32
	Share        string
	Partition    string

	// What it asked for (per node, except Nodes).
	Nodes       int
	GPUsPerNode int
	CPUsPerNode int
	MemPerNode  int64
	Walltime    time.Duration
	// Allocs is where its last run ran.
	Allocs []Alloc

	Submit, Eligible, Start, End time.Time
	Used                         time.Duration // run time over all runs
	Runs, Preemptions            int
	ExitStatus                   *int
	Outcome                      Outcome
	Reason                       string // the stop or failure reason, as qstat shows it

	// GPU-seconds over all runs. Owned+Borrowed is every GPU-second the job
	// held; Lost is the part held by runs that ended in a preemption, Grace
	// the part between SIGTERM and exit of those runs.
	OwnedGPUSeconds, BorrowedGPUSeconds float64
	LostGPUSeconds, GraceGPUSeconds     float64

	// The GPU use of its last run, as its nodes sampled it (zero: not
	// sampled): mean utilization in percent and peak memory in bytes
	// (summed over its GPUs); the GPU-seconds sampled (all it held, when
	// sampled at all), the part of them at < 5% use (by the share of idle
	// samples) and their sum weighted by the utilization (efficiency =
	// UtilGPUSeconds / SampledGPUSeconds).
	GPUMeanUtil                                       float64
	GPUPeakMem                                        int64
	SampledGPUSeconds, IdleGPUSeconds, UtilGPUSeconds float64
	// Detail is what the job was beyond its accounting (schema version 3;
	// older rows have none). Jobs reads it only with JobFilter.Detail.
	Detail Detail
}

// GPUs is the number of GPUs the job asked for.
func (r *Record) GPUs() int { return max(r.Nodes, 1) * r.GPUsPerNode }

// Limits on what a record may hold: the store refuses larger ones.
const (
	MaxIDLen    = 256
	MaxNameLen  = 1024
	MaxAllocs   = 4096
	MaxTextLen  = 4096 // user, share, partition, reason
	MaxGPUIndex = 1 << 16
)

// Validate checks a record before it is stored.
func (r *Record) Validate() error {
	switch {
	case r.ID == "" || len(r.ID) > MaxIDLen:
		return fmt.Errorf("%w: record id %q", ErrInvalid, r.ID)
	case len(r.Name) > MaxNameLen:
		return fmt.Errorf("%w: job %s: name of %d bytes", ErrInvalid, r.ID, len(r.Name))
	case len(r.User) > MaxTextLen || len(r.Share) > MaxTextLen || len(r.Partition) > MaxTextLen ||
		len(r.Reason) > MaxTextLen || len(r.ArrayParent) > MaxIDLen || len(r.ArrayIndices) > MaxTextLen:
		return fmt.Errorf("%w: job %s: a field is too long", ErrInvalid, r.ID)
	case len(r.Allocs) > MaxAllocs:
		return fmt.Errorf("%w: job %s: %d allocations", ErrInvalid, r.ID, len(r.Allocs))
	case r.End.IsZero():
		return fmt.Errorf("%w: job %s: no end time", ErrInvalid, r.ID)
	case !(r.GPUMeanUtil >= 0 && r.GPUMeanUtil <= 100) || r.GPUPeakMem < 0 ||
		!(r.SampledGPUSeconds >= 0 && r.IdleGPUSeconds >= 0 && r.UtilGPUSeconds >= 0) ||
		r.IdleGPUSeconds > r.SampledGPUSeconds*(1+1e-9) || r.UtilGPUSeconds > r.SampledGPUSeconds*(1+1e-9) ||
		math.IsInf(r.SampledGPUSeconds, 0):
		return fmt.Errorf("%w: job %s: GPU use out of range", ErrInvalid, r.ID)
	}
	if err := r.Detail.validate(r.ID); err != nil {
		return err
	}
	switch r.Outcome {
	case Completed, Failed, Deleted:
	default:
		return fmt.Errorf("%w: job %s: outcome %q", ErrInvalid, r.ID, r.Outcome)
	}
	for _, a := range r.Allocs {
		if a.Node == "" || strings.ContainsAny(a.Node, " :,") || len(a.Node) > MaxTextLen {
			return fmt.Errorf("%w: job %s: node name %q", ErrInvalid, r.ID, a.Node)
		}
		for _, g := range a.GPUs {
			if g < 0 || g > MaxGPUIndex {
				return fmt.Errorf("%w: job %s: GPU index %d", ErrInvalid, r.ID, g)
			}
		}
	}
	return nil
}

// formatAllocs writes allocations as "gpu01:0,1 gpu02:3" (a node with no
// GPUs as "cpu01:").
func formatAllocs(as []Alloc) string {
	var b strings.Builder
	for i, a := range as {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Node)
		b.WriteByte(':')
		for k, g := range a.GPUs {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(g))
		}
	}
	return b.String()
}

// parseAllocs reads formatAllocs' text.
func parseAllocs(s string) ([]Alloc, error) {
	if s == "" {
		return nil, nil
	}
	var as []Alloc
	for _, f := range strings.Fields(s) {
		node, gpus, ok := strings.Cut(f, ":")
		if !ok || node == "" {
			return nil, fmt.Errorf("%w: allocation %q", ErrCorrupt, f)
		}
		a := Alloc{Node: node}
		if gpus != "" {
			for _, g := range strings.Split(gpus, ",") {
				n, err := strconv.Atoi(g)
				if err != nil {
					return nil, fmt.Errorf("%w: allocation %q", ErrCorrupt, f)
				}
				a.GPUs = append(a.GPUs, n)
			}
		}
		as = append(as, a)
	}
	return as, nil
}

// ShareSample is one share's standing over an interval that ends at Time:
// GPUs guaranteed, held, held beyond the quota, and lent to other shares.
type ShareSample struct {
	Time          time.Time
	Seconds       float64 // the interval's length
	Share         string
	Partition     string
	PartitionGPUs int // GPUs of the partition's usable nodes
	Quota         int
	InUse         int
	Borrowed      int
	Lent          int
}

// Validate checks a sample before it is stored.
func (s *ShareSample) Validate() error {
	switch {
	case s.Share == "" || len(s.Share) > MaxTextLen || len(s.Partition) > MaxTextLen:
		return fmt.Errorf("%w: sample share %q", ErrInvalid, s.Share)
	case s.Time.IsZero():
		return fmt.Errorf("%w: sample of %s: no time", ErrInvalid, s.Share)
	case !(s.Seconds > 0 && s.Seconds <= 86400):
		return fmt.Errorf("%w: sample of %s: interval %v s", ErrInvalid, s.Share, s.Seconds)
	case s.Quota < 0 || s.InUse < 0 || s.Borrowed < 0 || s.Lent < 0 || s.PartitionGPUs < 0:
		return fmt.Errorf("%w: sample of %s: negative count", ErrInvalid, s.Share)
	}
	return nil
}
