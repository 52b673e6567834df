package runtime

import "errors"

// Job output.
//
// The job writes its own stdout and stderr: sharq's in-container init
// (see initScript) redirects them with >> to the host files, which are bind
// mounted into the container at OutputStdout and OutputStderr. So output
// keeps flowing whatever happens to the node daemon or containerd (no
// copier process on the host), a restarted run appends, and the files are
// written with the job's own credentials — which also works on NFS homes
// with root_squash, where the containerd shim (root) could not write.
//
// Before the container starts, openOutput creates or opens each file as
// the job's user (see access.go), so the file is owned by UID:GID, mode
// 0644, and a path the user may not write fails Start instead of being
// created by root.
//
// The mount points live on the container's own /run tmpfs, so that
// nothing is created in the image's snapshot, nor on the host's root for
// a host-rootfs job (HostImage).
const (
	OutputDir    = "/run/.sharq"
	OutputStdout = OutputDir + "/stdout"
	OutputStderr = OutputDir + "/stderr"
)

// ErrOutput wraps failures to create a job's output file (openOutput in
// access.go creates or opens them).
var ErrOutput = errors.New("cannot create job output file")
