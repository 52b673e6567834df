package sim

import (
	"hash/fnv"
	"math"
	"time"
)

// The walltime model of import-itp. The ITP trace has each job's actual
// run time but not the walltime its user asked for, and backfill plans
// with the asked-for walltime, so the model matters. What is known of real
// users' estimates:
//
//   - They are modal: a few round values cover most jobs (Tsafrir, Etsion
//     and Feitelson, "Modeling User Runtime Estimates", JSSPP 2005: about
//     20 values cover 90% of the jobs, the most popular being 1 hour and
//     the queue's maximum).
//   - They are overestimates, often by far: runtime/estimate is spread
//     almost uniformly over (0, 1] with a spike at 1 for jobs killed at
//     their limit (Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; the
//     "f-model" multiplies the run time by a uniform factor in [1, f]).
//
// The model: a user leaves headroom over the run time they expect, a
// factor 1+u with u uniform in [0, 1) (drawn from a hash of the job's id
// and a seed, so the same trace always gets the same walltimes), and
// rounds the result up to the next of the modal values WalltimeLadder
// (1, 2, 4, 8, 24, 48 and 168 hours); above the top one, to whole weeks.
// So a 10-minute job asks for 1 hour, a 90-minute job for 2 or 4 hours, a
// 30-hour job for 48 hours or a week. The walltime is never below the run
// time: the ITP durations are of jobs that ran to their end, and a job
// that hit its walltime would have been killed, which the trace does not
// show.

// WalltimeLadder is the modal walltimes users ask for, ascending.
var WalltimeLadder = []time.Duration{
	1 * time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour,
	24 * time.Hour, 48 * time.Hour, 168 * time.Hour,
}

// DefaultWalltimeSeed is import-itp's default --walltime-seed.
const DefaultWalltimeSeed = 1

// EstimateWalltime is the walltime the model gives a job of the given id
// and run time: the run time times a headroom factor in [1, 2) drawn
// deterministically from id and seed, rounded up to the next value of
// WalltimeLadder, or to whole weeks above the top one.
func EstimateWalltime(id string, run time.Duration, seed uint64) time.Duration {
	if run <= 0 {
		return 0
	}
	want := time.Duration(math.Ceil(float64(run) * (1 + headroom(id, seed))))
	for _, w := range WalltimeLadder {
		if want <= w {
			return w
		}
	}
	top := WalltimeLadder[len(WalltimeLadder)-1]
	weeks := (want + top - 1) / top
	return min(weeks*top, time.Duration(maxSeconds)*time.Second)
}

// headroom is u in [0, 1) from FNV-1a over the seed and the id, its bits
// mixed by splitmix64's finalizer (FNV's high bits alone vary little
// between ids that differ in their last characters).
func headroom(id string, seed uint64) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(id))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	// The top 53 bits make a float64 in [0, 1) exactly.
	return float64(x>>11) / (1 << 53)
}

// AddWalltimes fills every job's Walltime from the model (EstimateWalltime
// with seed).
func AddWalltimes(jobs []TraceJob, seed uint64) {
	for i := range jobs {
		jobs[i].Walltime = EstimateWalltime(jobs[i].ID, jobs[i].Duration, seed)
	}
}
