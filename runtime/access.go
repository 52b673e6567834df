package runtime

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// The job's paths on the node.
//
// A start order names host paths the container gets bind-mounted: the work
// directory and the output files. Nothing about them is trusted. Each is
// opened by the node daemon with the file-system credentials of the job's
// user (fsuid, fsgid and groups on one OS thread), so the user must be able
// to reach it through every directory of its path — a directory under
// another user's 0700 home is refused, although root could reach it — and
// to write it. Paths are resolved without following any symbolic link
// (openat2 RESOLVE_NO_SYMLINKS), and a work directory or output file on a
// kernel file system (/proc, /sys, /dev, cgroups...) is refused.
//
// The checked files are held open until the container is created (runc
// has made its mounts, the job has not started): then what the container
// has at each mount point must be the very file checked (same device and
// inode), else the container is discarded. Swapping a directory of the
// path for a symbolic link after the check (a race against runc's mount)
// therefore gives the job nothing else. (Mounting /proc/<pid>/fd/<n>
// directly is not possible: runc mounts in a new mount namespace, where
// the daemon's open file's mount does not exist.)

// ErrWorkDir wraps every reason a job's work directory is refused.
var ErrWorkDir = errors.New("job work directory refused")

// pinned is a path opened as the job's user.
type pinned struct {
	f *os.File
}

// Source names the opened file (a /proc magic link).
func (p pinned) Source() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), p.f.Fd()) }

func (p pinned) Close() error { return p.f.Close() }

// creds are the file-system credentials a job's paths are opened with.
type creds struct {
	uid, gid uint32
	groups   []uint32
}

// asUser runs fn on an OS thread with c's file-system credentials. The
// thread is never handed back to the Go scheduler: it ends with fn's
// goroutine.
func asUser(c creds, fn func() error) error {
	if euid := os.Geteuid(); euid != 0 {
		// Not root: only the process's own user, whose credentials the
		// thread has already (package hostproc's tests as a plain user).
		if int(c.uid) != euid || int(c.gid) != os.Getegid() {
			return fmt.Errorf("as %d:%d: needs root", c.uid, c.gid)
		}
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		errc <- func() error {
			gids := make([]int, 0, len(c.groups)+1)
			gids = append(gids, int(c.gid))
			for _, g := range c.groups {
				gids = append(gids, int(g))
			}
			// Raw per-thread system calls (unix, not syscall, whose
			// Setgroups changes every thread of the process).
			if err := unix.Setgroups(gids); err != nil {
				return fmt.Errorf("setgroups: %w", err)
			}
			if err := unix.Setfsgid(int(c.gid)); err != nil {
				return fmt.Errorf("setfsgid: %w", err)
			}
			if err := unix.Setfsuid(int(c.uid)); err != nil {
				return fmt.Errorf("setfsuid: %w", err)
			}
			return fn()
		}()
	}()
	return <-errc
}

// resolveFlags: no symbolic link anywhere in the path, no /proc magic link.
const resolveFlags = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openNoSymlinks opens an absolute path without following symbolic links:
// openat2 where the kernel has it (5.6), else one component at a time
// with O_NOFOLLOW.
func openNoSymlinks(path string, flags int, mode uint32) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveFlags})
	if !errors.Is(err, unix.ENOSYS) {
		if errors.Is(err, unix.ELOOP) {
			err = fmt.Errorf("%w (a symbolic link in the path: give its real path)", err)
		}
		return fd, err
	}
	return walkNoSymlinks(path, flags, mode)
}

// walkNoSymlinks is openNoSymlinks without openat2.
func walkNoSymlinks(path string, flags int, mode uint32) (int, error) {
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			unix.Close(dir)
			return -1, fmt.Errorf("path component %q: %w", p, unix.EINVAL)
		}
		fl, m := unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if i == len(parts)-1 {
			fl, m = flags|unix.O_NOFOLLOW, mode
		}
		next, err := unix.Openat(dir, p, fl, m)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	// O_PATH|O_NOFOLLOW opens a final symbolic link itself.
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(dir)
		if err == nil {
			err = fmt.Errorf("%w (a symbolic link: give its real path)", unix.ELOOP)
		}
		return -1, err
	}
	return dir, nil
}

// kernelFS are the file systems that hold no user data: a job's work
// directory or output on one of them is refused.
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC: "proc", unix.SYSFS_MAGIC: "sysfs", unix.DEVPTS_SUPER_MAGIC: "devpts",
	unix.CGROUP_SUPER_MAGIC: "cgroup", unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.SECURITYFS_MAGIC: "securityfs", unix.DEBUGFS_MAGIC: "debugfs", unix.TRACEFS_MAGIC: "tracefs",
	unix.BPF_FS_MAGIC: "bpf", unix.EFIVARFS_MAGIC: "efivarfs",
	unix.PSTOREFS_MAGIC: "pstore", unix.SELINUX_MAGIC: "selinuxfs", unix.SMACK_MAGIC: "smackfs",
	unix.BINFMTFS_MAGIC: "binfmt_misc", unix.NSFS_MAGIC: "nsfs",
	unix.HUGETLBFS_MAGIC: "hugetlbfs",
}

// specialFS names the kernel file system fd lives on, "" if none. /dev is
// devtmpfs, which statfs cannot tell from a tmpfs: a file on the file
// system mounted at /dev counts too.
func specialFS(fd int) (string, error) {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return "", err
	}
	if name, ok := kernelFS[int64(fs.Type)]; ok {
		return name, nil
	}
	var st, dev unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if unix.Stat("/dev", &dev) == nil && st.Dev == dev.Dev {
		return "the file system of /dev", nil
	}
	return "", nil
}

// openWorkDir opens dir as c: a directory c can reach and write, on no
// kernel file system, reached through no symbolic link.
func openWorkDir(dir string, c creds) (pinned, error) {
	var p pinned
	err := asUser(c, func() error {
		fd, err := openNoSymlinks(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), dir)
		if fs, err := specialFS(fd); err != nil || fs != "" {
			f.Close()
			if err != nil {
				return err
			}
			return fmt.Errorf("on %s", fs)
		}
		// AT_EACCESS: the check is made with the thread's fsuid, not the
		// real uid (root).
		err = unix.Faccessat2(fd, "", unix.W_OK|unix.X_OK, unix.AT_EMPTY_PATH|unix.AT_EACCESS)
		if err != nil && !errors.Is(err, unix.ENOSYS) {
			f.Close()
			return fmt.Errorf("not writable: %w", err)
		}
		p.f = f
		return nil
	})
	if err != nil {
		return pinned{}, fmt.Errorf("%w: %s as %d:%d: %w", ErrWorkDir, dir, c.uid, c.gid, err)
	}
	return p, nil
}

// nullDev is /dev/null's device number, the one device a job may name as
// its output.
var nullDev = unix.Mkdev(1, 3)

// openOutput creates path (with mode, whatever the daemon's umask) or
// opens it for append, as c: a regular file on no kernel file system, or
// /dev/null. A FIFO is refused rather than waited on (O_NONBLOCK). An
// existing file keeps its mode.
func openOutput(path string, c creds, mode uint32) (pinned, error) {
	var p pinned
	err := asUser(c, func() error {
		const base = unix.O_WRONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
		fd, err := openNoSymlinks(path, base|unix.O_CREAT|unix.O_EXCL, mode)
		created := err == nil
		if errors.Is(err, unix.EEXIST) {
			fd, err = openNoSymlinks(path, base|unix.O_APPEND, 0)
		}
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), path)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			f.Close()
			return err
		}
		switch typ := st.Mode & unix.S_IFMT; {
		case typ == unix.S_IFCHR && st.Rdev == nullDev:
		case typ != unix.S_IFREG:
			f.Close()
			return fmt.Errorf("not a regular file (mode %#o)", st.Mode)
		default:
			if fs, err := specialFS(fd); err != nil || fs != "" {
				f.Close()
				if err != nil {
					return err
				}
				return fmt.Errorf("on %s", fs)
			}
		}
		if created {
			// The umask may have cut the mode.
			if err := unix.Fchmod(fd, mode); err != nil {
				f.Close()
				return err
			}
		}
		p.f = f
		return nil
	})
	if err != nil {
		return pinned{}, fmt.Errorf("%w %s as %d:%d: %w", ErrOutput, path, c.uid, c.gid, err)
	}
	return p, nil
}

// JobPaths are a job's work directory and output files, opened.
type JobPaths struct {
	workDir, stdout, stderr pinned // stderr.f nil when joined
}

// OpenJobPaths opens s's work directory and output files as its user.
func OpenJobPaths(s Spec) (*JobPaths, error) {
	c := creds{s.UID, s.GID, s.Groups}
	p := &JobPaths{}
	var err error
	if s.WorkDir != "" {
		if p.workDir, err = openWorkDir(s.WorkDir, c); err != nil {
			return nil, err
		}
	}
	mode := 0o666 &^ s.umask()
	if p.stdout, err = openOutput(s.Stdout, c, mode); err != nil {
		p.Close()
		return nil, err
	}
	if s.Stderr != s.Stdout {
		if p.stderr, err = openOutput(s.Stderr, c, mode); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// JobFiles are a job's work directory and output files, opened as its
// user by OpenJobFiles.
type JobFiles struct {
	WorkDir *os.File // nil without Spec.WorkDir
	Stdout  *os.File
	Stderr  *os.File // nil when joined with Stdout
}

// OpenJobFiles opens s's work directory and output files as s's user, by
// the rules above, for a runtime that hands them to the job's process
// itself (package hostproc). Close them once the process has them.
func OpenJobFiles(s Spec) (*JobFiles, error) {
	p, err := OpenJobPaths(s)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", s.JobID, err)
	}
	return &JobFiles{WorkDir: p.workDir.f, Stdout: p.stdout.f, Stderr: p.stderr.f}, nil
}

// Close closes the files.
func (f *JobFiles) Close() {
	for _, x := range []*os.File{f.WorkDir, f.Stdout, f.Stderr} {
		if x != nil {
			x.Close()
		}
	}
}

func (p *JobPaths) Close() {
	for _, q := range []pinned{p.workDir, p.stdout, p.stderr} {
		if q.f != nil {
			q.Close()
		}
	}
}

// verify checks that the container of task pid (created, not started)
// has exactly the opened files at s's work directory and outputs: a path
// swapped for a symbolic link or another directory between the check and
// runc's mount is caught here. Paths are resolved inside the container's
// root (RESOLVE_IN_ROOT).
func (p *JobPaths) Verify(pid uint32, s Spec) error {
	root, err := unix.Open(fmt.Sprintf("/proc/%d/root", pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("container root: %w", err)
	}
	defer unix.Close(root)
	check := func(q pinned, inside string, what error) error {
		if q.f == nil {
			return nil
		}
		fd, err := unix.Openat2(root, inside, &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return fmt.Errorf("%w: %s in the container: %w", what, inside, err)
		}
		defer unix.Close(fd)
		var got, want unix.Stat_t
		if err := unix.Fstat(fd, &got); err != nil {
			return err
		}
		if err := unix.Fstat(int(q.f.Fd()), &want); err != nil {
			return err
		}
		if got.Dev != want.Dev || got.Ino != want.Ino {
			return fmt.Errorf("%w: %s changed while the job started", what, q.f.Name())
		}
		return nil
	}
	return errors.Join(
		check(p.workDir, s.WorkDir, ErrWorkDir),
		check(p.stdout, OutputStdout, ErrOutput),
		check(p.stderr, OutputStderr, ErrOutput),
	)
}
