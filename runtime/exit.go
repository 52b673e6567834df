package runtime

import "golang.org/x/sys/unix"

// ExitStatusLost is the status reported for a job container whose process
// containerd no longer knows (its task is gone, e.g. after a host reboot,
// or it was created but never started): as if killed by SIGKILL.
const ExitStatusLost = 256 + int(unix.SIGKILL)

// PBSExitStatus maps containerd's exit status to PBS's.
//
// containerd (runc shim) reports a process killed by signal N as 128+N,
// exactly like a process that called exit(128+N); the two cannot be told
// apart from the status. The mapping therefore uses what the runtime knows:
// when Stop was called for the container (stopped) and the status is
// 128+SIGTERM or 128+SIGKILL, the job died of our signal and gets 256+N.
// Every other status is the script's own code, including 128+N for a job
// whose last command died of a signal (as PBS reports it) and 137 for a
// job the kernel's OOM killer ended without a Stop. The one ambiguity: a
// stopped job whose TERM trap itself calls exit 143 (or 137) reports
// 271 (265).
func PBSExitStatus(status uint32, stopped bool) int {
	if stopped && (status == 128+uint32(unix.SIGTERM) || status == 128+uint32(unix.SIGKILL)) {
		return 256 + int(status-128)
	}
	return int(status)
}
