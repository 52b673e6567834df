package noded

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

// ErrBadOrder is wrapped by every reason a start order cannot be run.
var ErrBadOrder = errors.New("bad start order")

// Files in a job's node directory, and where the job sees them. The node
// directory lies in sharqd's state directory (0700, root), which a job of
// the host image would have to pass through if it saw them at their node
// paths; in the container's own /run it reaches only its own two files.
const (
	scriptFile   = "script"
	nodeFileName = "nodefile"
	jobFilesDir  = "/run/sharq/job"
)

// specInput is what turning a start order into a container spec needs
// besides the order.
type specInput struct {
	Node           string
	GPUs           []api.GPU // the node's inventory
	ExtraDevices   []string  // control devices GPU jobs get when they exist
	JobDir         string    // the job's node directory (script, node file)
	CheckpointRoot string
	Partition      conf.Partition // the node's: pids limit, user namespaces, network
	Clients        jobClients     // the client commands, munged, the controller's address
	Mounts         []conf.Mount   // the partition's and the cluster's, parents first
	HostImage      bool           // the partition lets jobs run on the host's root (runtime.HostImage)
	// Home gives a user's home directory from this node's user database;
	// nil or "" = unknown.
	Home func(uid uint32) string
}

// prepareSpec checks a start order, writes the job's script and node file
// into in.JobDir, makes its checkpoint directory, and returns the container
// spec. Every file the job sees is bind-mounted at its host path.
func prepareSpec(o *api.StartOrder, in specInput) (runtime.Spec, error) {
	j := &o.Job
	if err := checkJobID(j.ID); err != nil {
		return runtime.Spec{}, err
	}
	image := o.Image // resolved by the controller (the job's or its partition's)
	switch {
	case image == "":
		return runtime.Spec{}, fmt.Errorf("%w: job %s: no image", ErrBadOrder, j.ID)
	case !filepath.IsAbs(j.WorkDir):
		return runtime.Spec{}, fmt.Errorf("%w: job %s: workdir %q is not absolute", ErrBadOrder, j.ID, j.WorkDir)
	case j.Script == "" && len(j.Command) == 0 && !j.Interactive:
		return runtime.Spec{}, fmt.Errorf("%w: job %s: neither script nor command", ErrBadOrder, j.ID)
	case o.Run < 0:
		return runtime.Spec{}, fmt.Errorf("%w: job %s: run %d", ErrBadOrder, j.ID, o.Run)
	}
	umask, err := api.ParseUmask(j.Umask)
	if err != nil {
		return runtime.Spec{}, fmt.Errorf("%w: job %s: %w", ErrBadOrder, j.ID, err)
	}
	if image == runtime.HostImage && !in.HostImage {
		return runtime.Spec{}, fmt.Errorf("%w: job %s: image %q is not allowed in this node's partition (host_image)", ErrBadOrder, j.ID, image)
	}
	site, err := jobMounts(j.ID, in.Mounts)
	if err != nil {
		return runtime.Spec{}, err
	}
	gpus, err := pickGPUs(o.GPUs, in.GPUs)
	if err != nil {
		return runtime.Spec{}, fmt.Errorf("%w: job %s: %w", ErrBadOrder, j.ID, err)
	}
	nodes := o.NodeList
	if len(nodes) == 0 {
		nodes = []string{in.Node}
	}
	if err := checkNodeFile(nodes, j.Resources.MPIProcs); err != nil {
		return runtime.Spec{}, fmt.Errorf("%w: job %s: %w", ErrBadOrder, j.ID, err)
	}
	// The script's interpreter is checked before anything is written: a
	// refused order leaves no directory behind.
	seenScript := path.Join(jobFilesDir, scriptFile)
	var scriptCmd []string
	if !j.Interactive && j.Script != "" {
		if scriptCmd, err = scriptArgs(j.Script, j.Shell, seenScript); err != nil {
			return runtime.Spec{}, fmt.Errorf("job %s: %w", j.ID, err)
		}
	}

	if err := os.MkdirAll(in.JobDir, 0o700); err != nil {
		return runtime.Spec{}, fmt.Errorf("job %s: %w", j.ID, err)
	}
	nodeFile := filepath.Join(in.JobDir, nodeFileName)
	if err := writeFileAtomic(nodeFile, nodeFileContent(nodes, j.Resources.MPIProcs), 0o644); err != nil {
		return runtime.Spec{}, fmt.Errorf("job %s: node file: %w", j.ID, err)
	}
	ckpt, err := checkpointDir(in.CheckpointRoot, j.ID, j.Owner.UID, j.Owner.GID)
	if err != nil {
		return runtime.Spec{}, err
	}
	// The configured mounts first: the job's own files, which may lie
	// below them (a checkpoint root on /scratch), go on top.
	mounts := append(site,
		runtime.Mount{Source: nodeFile, Dest: path.Join(jobFilesDir, nodeFileName), ReadOnly: true},
		runtime.Mount{Source: ckpt, Dest: ckpt},
	)
	mounts = append(mounts, in.Clients.mounts()...)
	args := j.Command
	if j.Interactive {
		// The command is the session's (sessions.go); the container waits.
		dir, err := interactiveDir(in.JobDir, j.Owner.UID, j.Owner.GID)
		if err != nil {
			return runtime.Spec{}, fmt.Errorf("job %s: %w", j.ID, err)
		}
		mounts = append(mounts, runtime.Mount{Source: dir, Dest: interactiveSeen})
		args = holderArgs()
	} else if j.Script != "" {
		script := filepath.Join(in.JobDir, scriptFile)
		if err := writeFileAtomic(script, []byte(j.Script), 0o644); err != nil {
			return runtime.Spec{}, fmt.Errorf("job %s: script: %w", j.ID, err)
		}
		mounts = append(mounts, runtime.Mount{Source: script, Dest: seenScript, ReadOnly: true})
		args = scriptCmd
	}

	var devices []string
	for _, g := range gpus {
		devices = append(devices, g.Device)
	}
	if len(gpus) > 0 {
		for _, d := range in.ExtraDevices {
			if _, err := os.Stat(d); err == nil {
				devices = append(devices, d)
			}
		}
	}
	return runtime.Spec{
		JobID:   j.ID,
		Node:    in.Node,
		Run:     o.Run,
		Image:   image,
		UID:     j.Owner.UID,
		GID:     j.Owner.GID,
		Groups:  j.Owner.Groups,
		Args:    args,
		Env:     buildEnv(o, jobEnv{Node: in.Node, NodeFile: path.Join(jobFilesDir, nodeFileName), CheckpointDir: ckpt, GPUs: gpus, Clients: in.Clients, Home: home(in.Home, j)}),
		WorkDir: j.WorkDir,
		Stdout:  j.Stdout,
		Stderr:  j.Stderr,
		Mounts:  mounts,
		Devices: devices,
		CPUs:    j.Resources.CPUsPerNode,
		Memory:  j.Resources.MemPerNode,
		Pids:    in.Partition.PidsLimit,
		UserNS:  in.Partition.AllowUserNamespaces,
		Network: in.Partition.Network,
		Umask:   &umask,
	}, nil
}

// home is the job owner's home directory: this node's user database's,
// else the one qsub saw (PBS_O_HOME), else "".
func home(lookup func(uint32) string, j *api.RunSpec) string {
	if lookup != nil {
		if h := lookup(j.Owner.UID); filepath.IsAbs(h) {
			return h
		}
	}
	if h := j.Env["PBS_O_HOME"]; filepath.IsAbs(h) {
		return h
	}
	return ""
}

// Bounds on a start order's node file: the controller's own range of
// -l mpiprocs, and the file's size (4,096 nodes of 128 ranks with names of
// 31 bytes are 16 MiB), so that no order makes the daemon build a file of
// gigabytes in memory.
const (
	maxMPIProcs = 4096
	maxNodeFile = 16 << 20
)

// checkNodeFile refuses a node list or rank count whose PBS_NODEFILE
// would be out of range or not one name a line.
func checkNodeFile(nodes []string, mpiprocs int) error {
	if mpiprocs < 0 || mpiprocs > maxMPIProcs {
		return fmt.Errorf("mpiprocs %d out of range (0 to %d)", mpiprocs, maxMPIProcs)
	}
	size := 0
	for _, n := range nodes {
		if n == "" || strings.ContainsAny(n, "\n\x00") {
			return fmt.Errorf("node name %q in the node list", n)
		}
		size += (len(n) + 1) * max(mpiprocs, 1)
		if size > maxNodeFile {
			return fmt.Errorf("node file of %d nodes with %d ranks each is over %d bytes", len(nodes), max(mpiprocs, 1), maxNodeFile)
		}
	}
	return nil
}

// nodeFileContent is PBS_NODEFILE: each node of the job once per MPI rank
// it runs (-l select=N:mpiprocs=R; one when not given), in order.
func nodeFileContent(nodes []string, mpiprocs int) []byte {
	var b strings.Builder
	for _, n := range nodes {
		for range max(mpiprocs, 1) {
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// pickGPUs finds the assigned GPU indices in the inventory.
func pickGPUs(idx []int, inv []api.GPU) ([]api.GPU, error) {
	out := make([]api.GPU, 0, len(idx))
	seen := make(map[int]bool, len(idx))
	for _, i := range idx {
		if seen[i] {
			return nil, fmt.Errorf("GPU %d assigned twice", i)
		}
		seen[i] = true
		found := false
		for _, g := range inv {
			if g.Index == i {
				if g.Device == "" {
					return nil, fmt.Errorf("GPU %d has no device node", i)
				}
				out = append(out, g)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("GPU %d is not in the node's inventory", i)
		}
	}
	return out, nil
}

// checkJobID refuses a job id that cannot name a directory safely.
func checkJobID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > 200 || strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("%w: job id %q cannot name a directory", ErrBadOrder, id)
	}
	return nil
}

// checkpointDir returns root/<job id>, made owned by uid:gid with mode 0700
// when missing. An existing one must be a real directory of that owner: a
// job never gets another user's checkpoints.
func checkpointDir(root, id string, uid, gid uint32) (string, error) {
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("job %s: checkpoint root %q is not absolute", id, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("job %s: checkpoint root: %w", id, err)
	}
	dir := filepath.Join(root, id)
	// Made under a private name and renamed into place, so that a second
	// node daemon of the same job (a shared filesystem, or several nodes on
	// one machine) never sees it half made, owned by root.
	tmp, err := os.MkdirTemp(root, ".new-")
	if err != nil {
		return "", fmt.Errorf("job %s: checkpoint dir: %w", id, err)
	}
	if err := os.Lchown(tmp, int(uid), int(gid)); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("job %s: checkpoint dir: %w", id, err)
	}
	err = os.Rename(tmp, dir) // fails if dir exists and is not an empty directory
	if err == nil {
		return dir, nil
	}
	os.Remove(tmp)
	if _, statErr := os.Lstat(dir); statErr != nil {
		return "", fmt.Errorf("job %s: checkpoint dir: %w", id, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("job %s: checkpoint dir: %w", id, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return "", fmt.Errorf("job %s: checkpoint dir %s is not a directory", id, dir)
	}
	if st.Uid != uid {
		return "", fmt.Errorf("job %s: checkpoint dir %s belongs to uid %d, not the job's owner %d", id, dir, st.Uid, uid)
	}
	return dir, nil
}
