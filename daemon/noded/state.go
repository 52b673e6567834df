package noded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrLocked means another sharqd already runs for this node on this machine.
var ErrLocked = errors.New("state directory in use by another sharqd")

// DefaultStateDir is a node's state directory when none is given.
func DefaultStateDir(node string) string {
	return filepath.Join("/var/lib/sharq/node", node)
}

// Layout of a node's state directory:
//
//	<dir>/lock                     held (flock) while a sharqd runs for the node
//	<dir>/jobs/<job id>/state.json the run's jobRecord
//	<dir>/jobs/<job id>/script     the job's script, seen read-only at /run/sharq/job/script
//	<dir>/jobs/<job id>/nodefile   PBS_NODEFILE, seen read-only at /run/sharq/job/nodefile
const (
	lockFile   = "lock"
	jobsDir    = "jobs"
	recordFile = "state.json"
)

// jobRecord is what the daemon must remember of a run across its own
// restarts and the runtime does not keep: the walltime clock and a stop in
// progress. It is written before the container starts.
type jobRecord struct {
	JobID    string        `json:"job_id"`
	Run      int           `json:"run"`
	Started  time.Time     `json:"started"`
	Walltime time.Duration `json:"walltime"` // 0: none
	Grace    time.Duration `json:"grace"`    // for a walltime stop
	// A stop in progress: re-issued with what is left of its grace when the
	// daemon restarts before the job has exited.
	StopReason string        `json:"stop_reason,omitempty"`
	StopGrace  time.Duration `json:"stop_grace,omitempty"`
	StopTime   time.Time     `json:"stop_time,omitzero"`
	// Interactive (qsub -I): the container waits for its session, whose
	// exit status it exits with (interactive.go).
	Interactive bool `json:"interactive,omitempty"`
	// GPUs are the run's GPUs, inventory indices (sampled: gpuuse.go).
	GPUs []int `json:"gpus,omitempty"`
}

// store keeps the job records of one node.
type store struct{ dir string }

func (s store) jobDir(id string) string { return filepath.Join(s.dir, jobsDir, id) }

func (s store) save(r *jobRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("job %s: state: %w", r.JobID, err)
	}
	if err := os.MkdirAll(s.jobDir(r.JobID), 0o700); err != nil {
		return fmt.Errorf("job %s: state: %w", r.JobID, err)
	}
	if err := writeFileAtomic(filepath.Join(s.jobDir(r.JobID), recordFile), b, 0o600); err != nil {
		return fmt.Errorf("job %s: state: %w", r.JobID, err)
	}
	return nil
}

// drop deletes a job's node directory.
func (s store) drop(id string) error {
	if err := os.RemoveAll(s.jobDir(id)); err != nil {
		return fmt.Errorf("job %s: state: %w", id, err)
	}
	return nil
}

// loadAll reads every job record; a directory without a readable record
// comes back with a nil record so the caller can clean it up.
func (s store) loadAll() (map[string]*jobRecord, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, jobsDir))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]*jobRecord{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	out := make(map[string]*jobRecord, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		id := e.Name()
		b, err := os.ReadFile(filepath.Join(s.jobDir(id), recordFile))
		var r jobRecord
		if err != nil || json.Unmarshal(b, &r) != nil || r.JobID != id {
			out[id] = nil
			continue
		}
		out[id] = &r
	}
	return out, nil
}

// lock takes the node's lock file; the returned function releases it. The
// kernel releases it when the process dies, even by SIGKILL.
func (s store) lock() (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, s.dir)
		}
		return nil, fmt.Errorf("state dir: lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// writeFileAtomic replaces path with data: a reader, or a crash, sees the
// old content or the new, never a part.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, path)
}
