package noded

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

// checkMounts says which of the configured mounts this node lacks: a
// path that does not exist (or cannot be looked at) here. A node that
// lacks one reports it and runs no job (its jobs would silently miss
// /home or /scratch).
func checkMounts(mounts []conf.Mount) []string {
	var missing []string
	for _, m := range mounts {
		if _, err := os.Stat(m.Path); err != nil {
			missing = append(missing, fmt.Sprintf("mount %s: %v", m.Path, err))
		}
	}
	return missing
}

// jobMounts turns the configured mounts into the job's bind mounts, at
// their host paths; one missing now (it was there at start) fails the
// order rather than starting the job without it.
func jobMounts(id string, mounts []conf.Mount) ([]runtime.Mount, error) {
	out := make([]runtime.Mount, 0, len(mounts))
	for _, m := range mounts {
		if _, err := os.Stat(m.Path); err != nil {
			return nil, fmt.Errorf("%w: job %s: configured mount %s is missing on this node: %w", ErrBadOrder, id, m.Path, err)
		}
		out = append(out, runtime.Mount{Source: m.Path, Dest: m.Path, ReadOnly: m.ReadOnly})
	}
	return out, nil
}

// lookupHome is the home directory of uid in this node's user database
// (passwd, or NSS where sharqd is built with cgo); "" when unknown.
func lookupHome(uid uint32) string {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return ""
	}
	return u.HomeDir
}
