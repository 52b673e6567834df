// Package ctrd runs a private containerd: its config (only the plugins
// running containers from local images need, every path inside one
// directory), start, ping, stop, the sweep of every container it holds, and
// the cleanup of mounts and runc's per-namespace directories; and fake GPU
// devices (character devices with a major no driver has). Both the test
// helper internal/testenv and the local cluster of make up
// (internal/localcluster) use it; it does not import testing.
package ctrd
