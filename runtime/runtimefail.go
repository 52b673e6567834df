package runtime

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRuntime marks a start that failed in the node's container runtime
// itself (runc or the shim could not create or start the container: no
// cgroup mount, a missing cgroup controller file, a broken runc), not
// through anything the job chose: the node, not the job, is at fault, and
// the same start would fail for any job there.
var ErrRuntime = errors.New("the node's container runtime cannot start containers")

// jobCaused are the words of runc's errors that a job's own choices cause
// at container creation: its program (its shell, its image's) missing or
// not executable, its working directory unusable. Anything else runc or
// the shim says while creating or starting a container is the node's.
var jobCaused = []string{
	`exec: "`,                   // unable to start container process: exec: "/bin/sh": stat ...: no such file or directory (or exec format error)
	"executable file not found", // ... in $PATH
	"chdir to cwd",              // its working directory, in the image or refused
	"no such image",
	"image not found",
}

// runtimeFailure wraps err, an error of creating or starting a container
// (what), with ErrRuntime unless its words say the job caused it.
func runtimeFailure(job, what string, err error) error {
	msg := err.Error()
	for _, w := range jobCaused {
		if strings.Contains(msg, w) {
			return fmt.Errorf("start job %s: %s: %w", job, what, err)
		}
	}
	return fmt.Errorf("start job %s: %s: %w: %w", job, what, ErrRuntime, err)
}
