package api

// ReasonIdleGPUs is the Reason (qstat -a's column, qstat -f's comment) of
// a running job whose partition's idle policy found its GPUs idle
// (daemon/ctld/idle.go); it goes when they are busy again.
const ReasonIdleGPUs = "IdleGPUs"

// MsgNotice (controller -> node) has the node tell the sessions of a
// job's run (qsub -I, qexec) a line of text (Notice), as it tells them
// of a stop or a walltime warning. A node that does not know the run, or
// an older node that does not know the message, drops it.
const MsgNotice NodeMsgType = "notice"

// MaxNoticeText bounds NoticeOrder.Text; a node cuts a longer one.
const MaxNoticeText = 512

// NoticeOrder is a MsgNotice's text for one run of a job.
type NoticeOrder struct {
	JobID string `json:"job_id"`
	Run   int    `json:"run"`
	Text  string `json:"text"`
}
