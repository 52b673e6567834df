package runtime

import (
	"errors"
)

// ErrRuntime marks a start that failed in the node's container runtime
// itself (runc or the shim could not create or start the container: no
// cgroup mount, a missing cgroup controller file, a broken runc), not
// through anything the job chose: the node, not the job, is at fault, and
// the same start would fail for any job there.
var ErrRuntime = errors.New("the node's container runtime cannot start containers")
