// Package e2e holds sharq's end-to-end tests: real sharqctld and sharqd
// binaries, a private containerd running real containers from a small
// busybox image, fake GPUs that are real device files, and the real qsub,
// qstat, qdel, qhold, qrls, qalter and sharqctl run as an unprivileged user.
// multihost_test.go builds a cluster of real hosts from network namespaces
// (netns_test.go: veth pairs on a bridge in a namespace of its own,
// addresses 10.77.0.N the test assigns): a controller host, two GPU-node
// hosts with their own containerd and sharqd, and a login host; each runs
// its own munged with one key, and users act from the login host over the
// controller's TCP client port.
// The tests need root (to start containerd and switch users); CI runs them
// as root after contrib/local/install-deps.sh.
package e2e
