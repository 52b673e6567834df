// Package runtime is the interface between a node daemon and what runs its
// jobs: the Runtime and Execer interfaces, the job Spec, Task, their
// errors, and what every implementation shares: opening a job's work
// directory and output files as its user (access.go), container ids and
// PBS exit statuses. It links no container engine.
//
// Implementations: runtime/containerd (containers, what sharqd runs), and
// runtime/hostproc (host processes). runtime/runtimetest is the
// conformance suite both pass; runtime/gpu finds the node's GPUs.
package runtime
