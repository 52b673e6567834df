package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// Job output.
//
// The job writes its own stdout and stderr: sharq's in-container init
// (see initScript) redirects them with >> to the host files, which are bind
// mounted into the container at outputStdout and outputStderr. So output
// keeps flowing whatever happens to the node daemon or containerd (no
// copier process on the host), a restarted run appends, and the files are
// written with the job's own credentials — which also works on NFS homes
// with root_squash, where the containerd shim (root) could not write.
//
// Before the container starts, prepareOutput creates or opens each file as
// the job's user (fsuid/fsgid/groups switched on one OS thread), so the
// file is owned by UID:GID, mode 0644, and a path the user may not write
// fails Start instead of being created by root.
const (
	outputDir    = "/.sharq"
	outputStdout = outputDir + "/stdout"
	outputStderr = outputDir + "/stderr"
)

// ErrOutput wraps failures to create a job's output file.
var ErrOutput = errors.New("cannot create job output file")

// prepareOutput creates path (0644) or opens it for append, with the file
// system credentials uid, gid, groups.
func prepareOutput(path string, uid, gid uint32, groups []uint32) error {
	errc := make(chan error, 1)
	go func() {
		// The thread's credentials change for good: never unlock it, so it
		// exits with this goroutine instead of running other code.
		goruntime.LockOSThread()
		errc <- createAs(path, uid, gid, groups)
	}()
	if err := <-errc; err != nil {
		return fmt.Errorf("%w %s as %d:%d: %w", ErrOutput, path, uid, gid, err)
	}
	return nil
}

// createAs runs on a locked thread it may leave changed.
func createAs(path string, uid, gid uint32, groups []uint32) error {
	gids := make([]int, 0, len(groups)+1)
	gids = append(gids, int(gid))
	for _, g := range groups {
		gids = append(gids, int(g))
	}
	// Raw per-thread system calls (unix, not syscall, whose Setgroups
	// changes every thread of the process).
	if err := unix.Setgroups(gids); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := unix.Setfsgid(int(gid)); err != nil {
		return fmt.Errorf("setfsgid: %w", err)
	}
	if err := unix.Setfsuid(int(uid)); err != nil {
		return fmt.Errorf("setfsuid: %w", err)
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err == nil {
		defer unix.Close(fd)
		// The umask may have cut the mode.
		return unix.Fchmod(fd, 0o644)
	}
	if !errors.Is(err, unix.EEXIST) {
		return err
	}
	fd, err = unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
