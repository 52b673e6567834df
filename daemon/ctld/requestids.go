package ctld

import (
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// Idempotent submission. A client that lost the answer to a submit (the
// leader died while answering, a connection broke) sends the same request
// again, with the same api.SubmitSpec.RequestID, to whichever controller
// leads then; the controller answers a request id it remembers, from the
// same uid, with the job that request made instead of making a second one.
//
// The id travels inside the job's spool record (record.go), so it is
// written in the same transaction as the job: a new leader restores the
// ids of the jobs it restores, and no id is remembered for a job that is
// not durable. The memory is bounded both ways: an id is remembered for
// requestIDMemory after its submission, and at most maxRequestIDs ids are
// kept (the oldest go first). A retry later than that makes a new job;
// the client retries for at most SHARQ_SERVER_TIMEOUT, which Locate caps
// well below requestIDMemory.
const (
	requestIDMemory = 10 * time.Minute
	maxRequestIDs   = 100_000
)

// requestKey is one user's request id: another user's id never matches.
type requestKey struct {
	uid uint32
	id  string
}

type requestEntry struct {
	key requestKey
	requestJob
}

// requestIDs maps the request ids of recent submissions to their jobs, in
// the order they were added (the loop's).
type requestIDs struct {
	jobs  map[requestKey]requestJob
	order []requestEntry // oldest first; an entry a later add of its key replaced is stale
}

type requestJob struct {
	job string
	at  time.Time
}

func newRequestIDs() *requestIDs { return &requestIDs{jobs: map[requestKey]requestJob{}} }

// lookup returns the job the request made, if it is remembered.
func (r *requestIDs) lookup(k requestKey) (string, bool) {
	j, ok := r.jobs[k]
	return j.job, ok
}

// add remembers that the request k, made at, created job, then forgets
// what the bounds no longer allow as of now. An entry made before now
// minus requestIDMemory (a restored job) is not added.
func (r *requestIDs) add(k requestKey, job string, at, now time.Time) {
	if now.Sub(at) >= requestIDMemory {
		return
	}
	r.jobs[k] = requestJob{job: job, at: at}
	r.order = append(r.order, requestEntry{key: k, requestJob: requestJob{job: job, at: at}})
	r.prune(now)
}

// prune forgets the ids past either bound.
func (r *requestIDs) prune(now time.Time) {
	drop := 0
	for drop < len(r.order) && (len(r.jobs) > maxRequestIDs || len(r.order)-drop > 2*maxRequestIDs ||
		now.Sub(r.order[drop].at) >= requestIDMemory) {
		if e := r.order[drop]; r.jobs[e.key] == e.requestJob {
			delete(r.jobs, e.key)
		}
		drop++
	}
	if drop == 0 {
		return
	}
	clear(r.order[:drop])
	r.order = r.order[drop:]
	if cap(r.order) > 2*maxRequestIDs && len(r.order) < cap(r.order)/4 {
		r.order = append([]requestEntry(nil), r.order...) // give the dropped front back
	}
}

// len is how many ids are remembered.
func (r *requestIDs) len() int { return len(r.jobs) }

// checkRequestID refuses a request id a client cannot have made.
func checkRequestID(s string) error {
	if len(s) > api.MaxRequestID {
		return fmt.Errorf("request id of %d bytes; at most %d", len(s), api.MaxRequestID)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("request id %q: only letters, digits, '-' and '_'", s)
		}
	}
	return nil
}

// repeatedSubmit returns the job an earlier submission with the same
// request id made, when the controller remembers it and still has the job.
func (c *Controller) repeatedSubmit(id Identity, spec *api.SubmitSpec) (string, bool) {
	if spec.RequestID == "" {
		return "", false
	}
	jid, ok := c.requestIDs.lookup(requestKey{uid: id.UID, id: spec.RequestID})
	if !ok || c.jobs[jid] == nil {
		return "", false
	}
	c.log.Info("repeated submission: answered with the job it made", "job", jid, "uid", id.UID, "request", spec.RequestID)
	return jid, true
}
