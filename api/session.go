package api

import "time"

// OpSession asks the controller for a session in a running job (qsub -I
// once its job runs, qexec): Request.Session says which. The answer's
// Session says where to connect and with which one-time token; the
// controller has sent the same token to the node (MsgSession).
const OpSession Op = "session"

// SessionSpec is a session request.
type SessionSpec struct {
	Job string `json:"job"`
	// Node is the job's node to open the session on; "" = its first.
	Node string `json:"node,omitempty"`
	// Command runs instead of the user's login shell.
	Command []string `json:"command,omitempty"`
	// Primary is qsub -I's own session of an interactive job: the job
	// ends with it, and its exit status is the job's.
	Primary bool `json:"primary,omitempty"`
}

// Bounds of a session request.
const (
	MaxSessionArgs    = 256
	MaxSessionArgsLen = 64 << 10
)

// SessionGrant answers OpSession.
type SessionGrant struct {
	Job  string `json:"job"`
	Node string `json:"node"`
	// Addr is the node's session port (host:port) the client dials.
	Addr string `json:"addr"`
	// Token authenticates the connection once, until Expires; Munge says
	// the node also wants the client's MUNGE credential binding it.
	Token   string    `json:"token"`
	Munge   bool      `json:"munge,omitempty"`
	Expires time.Time `json:"expires"`
	// TLS: the node serves the session port with TLS (client_tls).
	TLS bool `json:"tls,omitempty"`
}

// MsgSession (controller -> node) announces a session: NodeMsg.Session.
const MsgSession NodeMsgType = "session"

// SessionOrder tells a node that a client will connect with Token for a
// session in one run of a job, as UID.
type SessionOrder struct {
	Token   string    `json:"token"`
	JobID   string    `json:"job_id"`
	Run     int       `json:"run"`
	UID     uint32    `json:"uid"`
	Command []string  `json:"command,omitempty"`
	Primary bool      `json:"primary,omitempty"`
	Munge   bool      `json:"munge,omitempty"`
	Expires time.Time `json:"expires"`
}
