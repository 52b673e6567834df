package sched

// A pass compares the shape of every job it passes over with the shapes it
// examined in the share (skipGone, examinedAs); at 200 shares and 100,000
// pending jobs making each shape afresh and comparing it field by field
// was a fifth of a pass. So a job keeps its shape, with a hash compared
// before the fields, until an event may have changed what it is made of:
// the job's request or walltime, its share, the configuration. Every such
// event (JobAltered, Moved, Swapped, ConfigReplaced, node events ...)
// moves Scheduler.profEpoch; the events that do not (Submitted, Exited,
// PriorityChanged, HoldChanged, DependencyOutcome, UsageRestored,
// Forgotten) change no job's shape. The property tests check after every
// event and pass that every kept shape (and charge) equals a fresh one
// (checkShapes).

// shapeOf is j's shape, kept between passes.
func (s *Scheduler) shapeOf(j *job) shape {
	if j.shapeAt == s.profEpoch+1 {
		return j.shapeK
	}
	k := s.freshShape(j)
	k.h = shapeHash(k)
	j.shapeK, j.chargeK, j.shapeAt = k, j.charge(), s.profEpoch+1
	return k
}

// chargeOf is j.charge(), kept with its shape (what it is made of, the
// request and the partition's largest node, changes only with profEpoch):
// a pass passing over many jobs reads it beside the shape.
func (s *Scheduler) chargeOf(j *job) int {
	s.shapeOf(j)
	return j.chargeK
}

// shapeHash hashes every field of k but h (FNV-1a over the fields, then a
// splitmix64 finish): deterministic, and only its equality is ever read.
func shapeHash(k shape) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
	}
	mix(uint64(k.nodes))
	mix(uint64(k.gpus))
	mix(uint64(k.cpus))
	mix(uint64(k.mem))
	mix(uint64(k.wall))
	if k.excl {
		mix(1)
	}
	for _, str := range []string{string(k.group), k.user} {
		mix(uint64(len(str)))
		for i := 0; i < len(str); i++ {
			mix(uint64(str[i]))
		}
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
