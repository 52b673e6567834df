package conf

// IdleAction is what the controller does to a running job whose GPUs its
// partition's idle policy found idle (idle_action).
type IdleAction string

const (
	// IdleActionNone marks the job IdleGPUs and nothing more (the default):
	// reclaims take it before busy jobs.
	IdleActionNone IdleAction = ""
	// IdleActionRequeue stops the job as a preemption does (SIGTERM, its
	// grace, SIGKILL) and puts it back in its queue, not counted as a
	// preemption. An interactive job, whose session cannot come back, is
	// stopped for good instead.
	IdleActionRequeue IdleAction = "requeue"
	// IdleActionStop stops the job for good, as qdel does (SIGTERM, its
	// grace, SIGKILL).
	IdleActionStop IdleAction = "stop"
)

// idleAction reads a partition's idle_action and idle_action_in_quota.
// idle_action needs idle_after (an action with no idle policy would never
// act, which is surely not what was meant); idle_action_in_quota without
// an action has no effect.
func (l *loader) idleAction(t *table, p *Partition) {
	if s, ok := t.str("idle_action"); ok {
		switch a := IdleAction(s); a {
		case IdleActionRequeue, IdleActionStop:
			p.IdleAction = a
			if p.IdleAfter == 0 {
				t.errf("idle_action", "needs idle_after (the time a job's GPUs must stay idle)")
			}
		default:
			t.errf("idle_action", "%q is not one of \"requeue\", \"stop\" (leave it out to only mark idle jobs)", s)
		}
	}
	if b, ok := t.boolean("idle_action_in_quota"); ok {
		p.IdleActionInQuota = b
		if b && p.IdleAction == IdleActionNone {
			t.warnf("idle_action_in_quota", "has no effect without idle_action")
		}
	}
}
