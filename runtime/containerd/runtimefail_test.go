package containerd

import (
	"errors"
	"testing"

	"github.com/sharq-hpc/sharq/runtime"
)

// TestRuntimeFailure: what runc says when the node's runtime is broken is
// the node's fault (runtime.ErrRuntime); what a job's own program or directory
// causes is not.
func TestRuntimeFailure(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		node bool
	}{
		{`failed to create shim task: OCI runtime create failed: runc create failed: no cgroup mount found in mountinfo: unknown`, true},
		{`failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: open /sys/fs/cgroup/sharq/1.t/pids.max: no such file or directory: unknown`, true},
		{`failed to create shim task: OCI runtime create failed: unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/x/log.json: no such file or directory): fork/exec /usr/bin/runc: exec format error`, true},
		{`OCI runtime create failed: runc create failed: unable to start container process: exec: "/job/run": exec format error: unknown`, false},
		{`fork/exec /usr/local/sbin/runc: permission denied: unknown`, true},
		{`failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown`, false},
		{`OCI runtime create failed: runc create failed: unable to start container process: exec: "python": executable file not found in $PATH: unknown`, false},
		{`OCI runtime create failed: runc create failed: unable to start container process: error during container init: chdir to cwd ("/home/a") set in config.json failed: permission denied: unknown`, false},
	} {
		err := runtimeFailure("1.t", "create task", errors.New(tc.msg))
		if got := errors.Is(err, runtime.ErrRuntime); got != tc.node {
			t.Errorf("%q: the node's fault %v, want %v", tc.msg, got, tc.node)
		}
	}
}
