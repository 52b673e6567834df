package ctld

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool"
)

// recordVersion is the spool record format this controller writes. The
// versions it reads:
//
//	1  the bare api.Job JSON, with no version key (written up to commit
//	   2cb5bca). Every field kept its name and meaning except Preemptions,
//	   which also counted requeues after a lost node; the upgrade keeps the
//	   sum there (NodeFailures and StartFailures start at 0).
//	2  {"v":2,"job":{...api.Job...}}
//
// A record of a newer version is refused with ErrRecordVersion, never
// guessed at: a downgraded controller stops instead of dropping fields.
const recordVersion = 2

// ErrRecordVersion: a spool record was written by a newer sharqctld.
var ErrRecordVersion = errors.New("spool record written by a newer sharqctld")

// storedJob is a job as the spool holds it (version 2 and later).
type storedJob struct {
	V   int      `json:"v"`
	Job *api.Job `json:"job"`
	// Request is the submission's request id (requestids.go), kept
	// beside the job and out of api.Job: no answer shows it. Older
	// controllers ignore it.
	Request string `json:"request,omitempty"`
}

// recordHead finds a record's version: a version 1 record has no "v".
type recordHead struct {
	V *int `json:"v"`
}

// encodeRecord is a job's spool bytes in the current version.
func encodeRecord(j *api.Job) ([]byte, error) { return encodeRequestRecord(j, "") }

// encodeRequestRecord is encodeRecord with the submission's request id.
func encodeRequestRecord(j *api.Job, request string) ([]byte, error) {
	return json.Marshal(storedJob{V: recordVersion, Job: j, Request: request})
}

// decodeRecord reads a job's spool bytes of any version this controller
// knows and upgrades them to the current api.Job.
func decodeRecord(id string, data []byte) (api.Job, error) {
	j, _, err := decodeRequestRecord(id, data)
	return j, err
}

// decodeRequestRecord is decodeRecord that also returns the submission's
// request id ("" when the record has none).
func decodeRequestRecord(id string, data []byte) (j api.Job, request string, err error) {
	j, request, err = decodeRecordVersions(id, data)
	if err != nil {
		return api.Job{}, "", err
	}
	if j.ID != id {
		return api.Job{}, "", fmt.Errorf("job %s: %w: the record names job %q", id, spool.ErrCorrupt, j.ID)
	}
	j.ArrayStates = nil // never stored
	return j, request, nil
}

// decodeRecordVersions decodes data by its version.
func decodeRecordVersions(id string, data []byte) (api.Job, string, error) {
	var h recordHead
	if err := json.Unmarshal(data, &h); err != nil {
		return api.Job{}, "", fmt.Errorf("job %s: %w: %w", id, spool.ErrCorrupt, err)
	}
	var j api.Job
	var request string
	switch {
	case h.V == nil: // version 1
		if err := json.Unmarshal(data, &j); err != nil {
			return api.Job{}, "", fmt.Errorf("job %s: %w (version 1): %w", id, spool.ErrCorrupt, err)
		}
	case *h.V == recordVersion:
		s := storedJob{Job: &j}
		if err := json.Unmarshal(data, &s); err != nil {
			return api.Job{}, "", fmt.Errorf("job %s: %w (version %d): %w", id, spool.ErrCorrupt, *h.V, err)
		}
		if s.Job == nil {
			return api.Job{}, "", fmt.Errorf("job %s: %w: version %d without a job", id, spool.ErrCorrupt, *h.V)
		}
		request = s.Request
	case *h.V > recordVersion:
		return api.Job{}, "", fmt.Errorf("job %s: record version %d, this sharqctld reads up to %d; run a sharqctld at least as new as the one that wrote the spool: %w",
			id, *h.V, recordVersion, ErrRecordVersion)
	default:
		return api.Job{}, "", fmt.Errorf("job %s: %w: record version %d", id, spool.ErrCorrupt, *h.V)
	}
	return j, request, nil
}
