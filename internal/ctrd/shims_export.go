package ctrd

// KillShims kills the shims of the containerd that listened on socket and
// their children (killShims), for a caller whose containerd is gone: the
// local cluster cleaning up after a run that was killed. It returns how
// many shims it killed.
func KillShims(socket string) (int, error) { return killShims(socket) }
