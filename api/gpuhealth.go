package api

import "time"

// GPUFaultKind says what made a node daemon fence one of its GPUs
// (GPUFault.Kind).
type GPUFaultKind string

const (
	GPUFaultXid      GPUFaultKind = "xid"       // an Xid critical error the driver reported (Xid says which)
	GPUFaultECC      GPUFaultKind = "ecc_dbe"   // uncorrectable (double-bit) ECC errors
	GPUFaultRowRemap GPUFaultKind = "row_remap" // a memory row could not be remapped
	GPUFaultLost     GPUFaultKind = "lost"      // NVML cannot reach the GPU (fallen off the bus)
	GPUFaultOther    GPUFaultKind = "other"     // a kind this controller does not know (a newer node's)
)

// UnmarshalText accepts the GPUFaultKind constants; a kind this side does
// not know (a newer node's) reads as GPUFaultOther, so the GPU is still
// fenced and the message is not refused.
func (k *GPUFaultKind) UnmarshalText(b []byte) error {
	switch v := GPUFaultKind(b); v {
	case GPUFaultXid, GPUFaultECC, GPUFaultRowRemap, GPUFaultLost, GPUFaultOther:
		*k = v
	default:
		*k = GPUFaultOther
	}
	return nil
}

// GPUFault is a fatal condition a node daemon saw on one of its GPUs
// (NodeMsg.GPUFaults, in every hello and heartbeat for as long as the
// daemon runs): the controller gives the GPU to no new job until an admin
// clears it (sharqctl node resume), after a reset.
type GPUFault struct {
	Index  int          `json:"index"` // the GPU's index on its node (api.GPU.Index)
	UUID   string       `json:"uuid,omitempty"`
	Kind   GPUFaultKind `json:"kind"`
	Xid    int          `json:"xid,omitempty"` // the Xid, for GPUFaultXid
	Reason string       `json:"reason"`        // for people: "Xid 79: GPU has fallen off the bus"
	// Fatal: no job can go on on the GPU (a fatal Xid, a lost GPU, an
	// uncorrectable ECC error): the job running on it is requeued as a
	// node-side failure, not counted against its retries.
	Fatal bool      `json:"fatal,omitempty"`
	Time  time.Time `json:"time"` // when the node daemon saw it
}

// MaxGPUFaultReason bounds GPUFault.Reason as a controller keeps it.
const MaxGPUFaultReason = 200
