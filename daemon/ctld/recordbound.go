package ctld

import (
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// recordFixed bounds what a job's spool record (encodeRecord) holds besides
// the lengths recordBound counts: the keys, punctuation, numbers, times and
// booleans of every field (TestRecordBound checks it with each at its
// longest).
const recordFixed = 2048

// recordBound is an upper bound of the length of a new job's spool record,
// from its strings' and lists' lengths alone: a string encodes in its two
// quotes and at most 6 bytes a byte (\u00XX). It lets submit skip the
// encode that checks the record's size for every job that is far below
// the limit; the record itself is encoded once, by the flush, after the
// scheduling pass has set the job's state and pending reason. ok is false
// for a job with parts a new job does not have (allocations, accounting),
// which recordBound does not count, or with a time JSON cannot encode (the
// encode's error refuses it): encode it to know.
// TestRecordBound fills every field of api.Job (one added later too) and
// fails when the bound falls short: a new field is counted here.
func recordBound(j *api.Job) (n int, ok bool) {
	if j.Allocs != nil || j.Estimated != nil || j.ArrayStates != nil || j.Acct != (api.Usage{}) {
		return 0, false
	}
	for _, t := range []time.Time{j.NotBefore, j.SubmitTime, j.StartTime, j.EndTime} {
		if !jsonTime(t) {
			return 0, false
		}
	}
	str := func(s string) int { return 2 + 6*len(s) }
	kv := func(m map[string]string) int {
		n := 0
		for k, v := range m {
			n += str(k) + str(v) + 2 // colon, comma
		}
		return n
	}
	n = recordFixed
	for _, s := range []string{j.ID, j.Name, j.Owner.User, j.Share, j.Partition, j.Script, j.Shell, j.WorkDir,
		j.Stdout, j.Stderr, j.Image, j.Join, j.Umask, j.Hold, j.ArrayIndices.Text(), j.ArrayParent, string(j.State), j.Stopping,
		j.Reason, j.CheckpointNode, string(j.Outcome), j.Resources.Group, j.RerunWhy} {
		n += str(s)
	}
	n += 11 * len(j.Owner.Groups) // a uint32 and its comma
	for _, a := range j.Command {
		n += str(a) + 1
	}
	n += kv(j.Env) + kv(j.Resources.Labels)
	for _, d := range j.Domains {
		n += str(d) + 1
	}
	for _, d := range j.Deps {
		n += len(`{"type":,"on":},`) + str(d.Type.String()) + str(d.On)
	}
	for _, h := range j.History {
		if !jsonTime(h.Time) {
			return 0, false
		}
		n += len(`{"time":"2006-01-02T15:04:05.999999999-07:00","state":,"what":},`) + str(string(h.State)) + str(h.What)
	}
	return n, true
}

// jsonTime says whether t encodes (time.Time.MarshalJSON): a year of four
// digits and a zone within a day.
func jsonTime(t time.Time) bool {
	_, off := t.Zone()
	return t.Year() >= 0 && t.Year() <= 9999 && off > -24*3600 && off < 24*3600
}
