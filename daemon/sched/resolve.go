package sched

import "time"

// What a start or a preemption says of a job, resolved here so that no
// driver works it out again (Start's Borrowed, Walltime, Grace, Image;
// Requeue's and Failure's Counts).

// DefaultGrace is what a job asks for as its grace (Job.Grace) when it
// takes its partition's PreemptGrace.
const DefaultGrace time.Duration = -1

// maxImageLen bounds a job's or a partition's image name (the core only
// carries it into its plans).
const maxImageLen = 4096

// fallbackGrace is the grace of a job whose share lost its partition (a
// reload removed it while the job ran): the configuration's default.
const fallbackGrace = 30 * time.Second

// borrowedBy is how many of the GPUs of allocs are beyond sh's quota on top
// of what sh holds now (before they are held).
func borrowedBy(sh *share, allocs []Alloc) int {
	g := 0
	for _, a := range allocs {
		g += len(a.GPUs)
	}
	owned := min(max(sh.quota()-sh.inUse(), 0), g)
	return g - owned
}

// partOf returns j's partition's configuration, or nil.
func partOf(j *job) *Partition {
	if j.share == nil || j.share.part == nil {
		return nil
	}
	return &j.share.part.cfg
}

// Grace is the grace of a job that asked for asked (DefaultGrace or any
// negative: the partition's PreemptGrace) in partition p (nil: none
// known), capped by p's MaxPreemptGrace (also when a reload lowered the
// cap after the job was submitted).
func Grace(p *Partition, asked time.Duration) time.Duration {
	g := asked
	if g < 0 {
		g = fallbackGrace
		if p != nil {
			g = p.PreemptGrace
		}
	}
	if p != nil && p.MaxPreemptGrace > 0 {
		g = min(g, p.MaxPreemptGrace)
	}
	return g
}

func (s *Scheduler) grace(j *job) time.Duration { return Grace(partOf(j), j.Grace) }

// image is j's container image, or its partition's DefaultImage.
func (s *Scheduler) image(j *job) string {
	if j.Image != "" {
		return j.Image
	}
	if p := partOf(j); p != nil {
		return p.DefaultImage
	}
	return ""
}

// counts are j's retry counters.
func (j *job) counts() Counts {
	return Counts{Preemptions: j.Preemptions, NodeFailures: j.NodeFailures, StartFailures: j.StartFailures}
}

// JobGrace is the grace of running job id under the configuration as it is
// now (for a stop the driver decides, qdel's), and whether the core knows
// the job.
func (s *Scheduler) JobGrace(id JobID) (time.Duration, bool) {
	j, ok := s.jobs[id]
	if !ok {
		return 0, false
	}
	return s.grace(j), true
}
