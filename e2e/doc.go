// Package e2e holds sharq's end-to-end tests: real sharqctld and sharqd
// binaries, a private containerd running real containers from a small
// busybox image, fake GPUs that are real device files, and the real qsub,
// qstat, qdel, qhold, qrls, qalter and sharqctl run as an unprivileged user.
// The tests need root (to start containerd and switch users); CI runs them
// as root after contrib/local/install-deps.sh.
package e2e
