package containerd

import (
	"fmt"
	"strings"

	"github.com/sharq-hpc/sharq/runtime"
)

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
// (what), with runtime.ErrRuntime unless its words say the job caused it.
func runtimeFailure(job, what string, err error) error {
	msg := err.Error()
	for _, w := range jobCaused {
		if strings.Contains(msg, w) {
			return fmt.Errorf("start job %s: %s: %w", job, what, err)
		}
	}
	return fmt.Errorf("start job %s: %s: %w: %w", job, what, runtime.ErrRuntime, err)
}
