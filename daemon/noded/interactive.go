package noded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// An interactive job's container (qsub -I) runs a holder instead of a
// script: a shell that waits on a FIFO in the job's session directory and
// exits with the status written there. sharqd writes the status of the
// job's own session (sessions.go) when it ends, so the container's exit
// status, which the controller records, is the shell's. Everything else
// (walltime, preemption, qdel) stops the holder as it stops any job.
const (
	interactiveDirName = "session"
	interactiveSeen    = "/run/sharq/session"
	exitFIFO           = "exit"
)

// holderArgs is the interactive job's argv: read one status from the FIFO
// (the open blocks until sharqd writes), exit with it.
func holderArgs() []string {
	return []string{"/bin/sh", "-c", `read s < ` + interactiveSeen + `/` + exitFIFO + `; exit "${s:-1}"`}
}

// interactiveDir makes the job's session directory (root's, 0755: the job
// cannot put anything else in the FIFO's place) and its exit FIFO (the
// job user's, 0600); it returns the directory.
func interactiveDir(jobDir string, uid, gid uint32) (string, error) {
	dir := filepath.Join(jobDir, interactiveDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("session directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("session directory: %w", err)
	}
	fifo := filepath.Join(dir, exitFIFO)
	if err := unix.Mkfifo(fifo, 0o600); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", fmt.Errorf("session exit FIFO: %w", err)
	}
	if err := os.Lchown(fifo, int(uid), int(gid)); err != nil {
		return "", fmt.Errorf("session exit FIFO: %w", err)
	}
	return dir, nil
}

// endInteractive makes the job's holder exit with status (0-255): it
// writes the status into the FIFO the holder reads. A holder that is gone
// already (the job was stopped) is fine.
func endInteractive(jobDir string, status int) error {
	fifo := filepath.Join(jobDir, interactiveDirName, exitFIFO)
	fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENXIO) {
		return nil // no reader: the holder has exited
	}
	if err != nil {
		return fmt.Errorf("end interactive job: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("end interactive job: %s is not a FIFO", fifo)
	}
	status = min(max(status, 0), 255)
	if _, err := unix.Write(fd, []byte(strconv.Itoa(status)+"\n")); err != nil {
		return fmt.Errorf("end interactive job: %w", err)
	}
	return nil
}

// reasonSessionLost is the stop reason of an interactive job whose session
// is gone for good (sharqd restarted under it, or it never connected).
const reasonSessionLost = "session"

// errSessionLost is its error text.
const errSessionLost = "the interactive session was lost (the node daemon restarted, or the session never connected)"
