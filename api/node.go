package api

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// NodeMsgType names a message between sharqctld and sharqd.
type NodeMsgType string

const (
	// node -> controller
	MsgHello     NodeMsgType = "hello"     // first message: Node, Secret, Inventory, Running
	MsgHeartbeat NodeMsgType = "heartbeat" // periodically, both ways
	MsgJobState  NodeMsgType = "job_state" // JobState
	// controller -> node
	MsgWelcome NodeMsgType = "welcome" // accepts Hello; Error set if refused
	MsgStart   NodeMsgType = "start"   // Start
	MsgStop    NodeMsgType = "stop"    // Stop
	// MsgRemove tells the node that the controller has durably recorded a
	// job's exit (JobID in Stop.JobID): only then may the node remove the
	// container, so an exit is never lost across a crash of either side.
	MsgRemove NodeMsgType = "remove"
	// MsgSignal (qsig) tells the node to send a signal to every process
	// of a job's run (Signal).
	MsgSignal NodeMsgType = "signal"
)

// NodeMsg is one message on a node connection; Type says which fields are set.
type NodeMsg struct {
	V         int          `json:"v"`
	Type      NodeMsgType  `json:"type"`
	Node      string       `json:"node,omitempty"`
	Secret    string       `json:"secret,omitempty"`
	Inventory *Inventory   `json:"inventory,omitempty"`
	Running   []RunningJob `json:"running,omitempty"`
	JobState  *JobStateMsg `json:"job_state,omitempty"`
	Start     *StartOrder  `json:"start,omitempty"`
	Stop      *StopOrder   `json:"stop,omitempty"`
	Signal    *SignalOrder `json:"signal,omitempty"`
	Notice    *NoticeOrder `json:"notice,omitempty"` // MsgNotice (api/idle.go)
	Error     string       `json:"error,omitempty"`
	// Code (welcome): why the hello was refused, for the node to act on.
	Code RefusalCode `json:"code,omitempty"`
	// Health (hello, heartbeat) is why the node cannot start jobs now, e.g.
	// its container runtime does not answer; "" = healthy. The controller
	// places nothing on an unhealthy node and shows why.
	Health string `json:"health,omitempty"`
	// SelfTests (hello, heartbeat) counts the runtime self-tests the node
	// daemon passed since it started (daemon/noded/selftest.go): one more
	// while the node is drained for its runtime (RuntimeFailing) clears
	// the drain.
	SelfTests uint64 `json:"self_tests,omitempty"`
	// GPUFaults (hello, heartbeat) are the GPUs the node daemon found
	// sick (api/gpuhealth.go), one entry per GPU and kind; none: all
	// healthy, or a daemon that does not watch them.
	GPUFaults []GPUFault `json:"gpu_faults,omitempty"`
	// GPUUse (heartbeat) is the GPU use of the runs the node runs, one
	// entry each, as sampled so far (api/gpuuse.go).
	GPUUse []JobGPUUse `json:"gpu_use,omitempty"`
	// Unlisted (hello): the node could not list its containers, so Running
	// says nothing; the controller keeps the runs it believes are there.
	// The node says hello again once it can list them.
	Unlisted bool      `json:"unlisted,omitempty"`
	Time     time.Time `json:"time,omitzero"`
	// Epoch is the sending controller's leader epoch (etcd election
	// revision; 0 for a single controller on bbolt). A node refuses
	// messages from an epoch below the highest it has seen.
	Epoch int64 `json:"epoch,omitempty"`
	// NotLeader (welcome): the controller is a follower of an HA cluster
	// and refuses the node; Leader is the leader's node address ("" when
	// none is known), which the node dials next.
	NotLeader bool   `json:"not_leader,omitempty"`
	Leader    string `json:"leader,omitempty"`
	// SessionAddr (hello) is the node's session port; an unspecified host
	// (0.0.0.0) means the address the node's connection comes from.
	SessionAddr string `json:"session_addr,omitempty"`
	// Session is MsgSession's order.
	Session *SessionOrder `json:"session_order,omitempty"`
	// The job lease (daemon/noded/lease.go). Seq (hello, a node's
	// heartbeat) numbers the node's messages on a connection, from 1 up.
	// Ack (welcome, the controller's heartbeat) is the highest Seq the
	// controller has received on the connection, and Lease the job lease
	// it grants: the node's jobs may run until Lease after the instant it
	// sent message Ack, and no longer unless a later one is acknowledged.
	// Zero: the peer predates leases (a node without Seq is not fenced; a
	// controller without Lease grants none, and such a node fences
	// nothing).
	Seq   uint64        `json:"seq,omitempty"`
	Ack   uint64        `json:"ack,omitempty"`
	Lease time.Duration `json:"lease,omitempty"`
}

// GPU is one GPU a node reports.
type GPU struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid,omitempty"`
	Model    string `json:"model,omitempty"`
	MemBytes uint64 `json:"mem_bytes,omitempty"`
	Device   string `json:"device"`             // device node, e.g. /dev/nvidia3
	PCI      string `json:"pci,omitempty"`      // bus id
	Topology string `json:"topology,omitempty"` // NVLink peers etc., when known
}

// Inventory is what a node has. Source says where the GPU list came from:
// "nvml" or "config".
type Inventory struct {
	GPUs     []GPU  `json:"gpus"`
	Source   string `json:"source"`
	CPUs     int    `json:"cpus"`
	MemBytes int64  `json:"mem_bytes"`
	Driver   string `json:"driver,omitempty"`
	// Missing lists what every job of the node should get and the node
	// lacks (a configured mount): the controller starts no job on it.
	Missing []string `json:"missing,omitempty"`
	// Checkpoint is what the node sees of its checkpoint_root.
	Checkpoint *CheckpointFS `json:"checkpoint,omitempty"`
}

// CheckpointFS is a node's view of its checkpoint_root: the filesystem and
// the marker file's id. Nodes of a partition that see the same marker
// share the directory (a preempted job finds its checkpoint on any of
// them); different markers mean node-local directories.
type CheckpointFS struct {
	Root   string `json:"root"`
	Type   string `json:"type,omitempty"`   // "nfs", "lustre", "ext4", ... or the magic number
	Marker string `json:"marker,omitempty"` // the id in root/.sharq-checkpoint-root
	Error  string `json:"error,omitempty"`  // why the node could not look
}

// RunningJob is a job a node still runs (or has seen end) when it says hello.
type RunningJob struct {
	JobID      string `json:"job_id"`
	Run        int    `json:"run"` // which run of the job (its preemption count at start)
	Exited     bool   `json:"exited"`
	ExitStatus int    `json:"exit_status"`
	// Error (exited) is why it ended, if not by itself (OOM killed,
	// walltime, a lost session), as JobStateMsg.Error.
	Error string `json:"error,omitempty"`
	// Stop (exited) is the node's own stop that ended it, as
	// JobStateMsg.Stop.
	Stop StopReason `json:"stop,omitempty"`
}

// JobStateMsg reports a change of a job on a node.
type JobStateMsg struct {
	JobID      string   `json:"job_id"`
	Run        int      `json:"run"`
	State      RunState `json:"state"`
	ExitStatus int      `json:"exit_status"`
	Error      string   `json:"error,omitempty"`
	// NodeFault (failed): the node, not the job, is why it could not start
	// (its container runtime is down): the job is requeued, and the failure
	// does not count against it.
	NodeFault bool `json:"node_fault,omitempty"`
	// GPUFault (failed, with NodeFault): a GPU of the order has a fault the
	// controller had not read when it sent the order
	// (daemon/noded/gpurefuse.go): not the container runtime's failure.
	GPUFault bool `json:"gpu_fault,omitempty"`
	// Refusal (failed): the job itself is refused (a path its user may
	// not use): it fails at once instead of being retried.
	Refusal StartRefusal `json:"refusal,omitempty"`
	// Stop (exited) is the node's own stop that ended the run:
	// StopLease when the node stopped it because its job lease ran out
	// (the controller requeues it as a job that lost its node), StopNone
	// otherwise.
	Stop StopReason `json:"stop,omitempty"`
	Time time.Time  `json:"time"`
}

// StartOrder tells a node to run its part of a job.
type StartOrder struct {
	Job      RunSpec       `json:"job"`
	Run      int           `json:"run"`
	GPUs     []int         `json:"gpus"`      // indices on this node
	NodeList []string      `json:"node_list"` // all nodes of the job, for PBS_NODEFILE
	Image    string        `json:"image"`     // resolved (job's or partition default)
	Grace    time.Duration `json:"grace"`     // resolved
	Walltime time.Duration `json:"walltime"`  // resolved
}

// StopOrder tells a node to stop a job: SIGTERM, Grace, then SIGKILL.
type StopOrder struct {
	JobID  string        `json:"job_id"`
	Grace  time.Duration `json:"grace"`
	Reason StopReason    `json:"reason"`
}

// SignalOrder tells a node to send Signal to every process of run Run of a
// job (qsig). A node ignores it for a run it does not run.
type SignalOrder struct {
	JobID  string `json:"job_id"`
	Run    int    `json:"run"`
	Signal Signal `json:"signal"`
}

// NVLinkPeers reads the GPU indices Topology names as direct NVLink
// peers ("nvlink gpu1x2 gpu3x2 switchx12": 1 and 3), ascending; nil when
// it names none. Links through an NVSwitch join every GPU behind it
// alike and are not peers here.
func (g GPU) NVLinkPeers() []int {
	f := strings.Fields(g.Topology)
	if len(f) == 0 || f[0] != "nvlink" {
		return nil
	}
	var out []int
	for _, p := range f[1:] {
		idx, ok := strings.CutPrefix(p, "gpu")
		if !ok {
			continue
		}
		idx, _, _ = strings.Cut(idx, "x")
		if i, err := strconv.Atoi(idx); err == nil && i >= 0 && i < maxGPUIndex && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// maxGPUIndex bounds the GPU indices NVLinkPeers reads.
const maxGPUIndex = 1 << 16
