// Package testenv gives tests a private containerd daemon (its own root,
// state, socket and config under /tmp/sharq-ctr-*; CRI and tracing off),
// the busybox test image imported into it, unique namespaces, and fake GPU
// device nodes. Tests using it need root, containerd, runc and a static
// busybox; they do not skip when those are missing, they fail.
package testenv
