package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// A job has two priorities. Its PBS priority (qsub -p, qalter -p:
// api.MinPBSPriority..api.MaxPBSPriority, 0 by default) is PBS's: any user
// sets it, and it orders the share's jobs of equal sharq priority. Its
// sharq priority (0..maxPriority, the share's priority_default unless an
// admin sets another with sharqctl job priority) comes first in the
// share's order and alone decides in-share preemption, so the right to
// preempt teammates is the admin's to grant (a user may only lower it).

// checkPBSPriority refuses a PBS priority outside PBS's range, in the
// user's own numbers.
func checkPBSPriority(p int) error {
	if p < api.MinPBSPriority || p > api.MaxPBSPriority {
		//lint:ignore ST1005 PBS's attribute name, as qstat -f shows it
		return fmt.Errorf("Priority %d is outside PBS's %d..%d", p, api.MinPBSPriority, api.MaxPBSPriority)
	}
	return nil
}

// aboveDefault words the refusal of a sharq priority above the share's
// priority_default to a user who is not an admin.
func aboveDefault(p int, sh *conf.Share) string {
	return fmt.Sprintf("sharq priority %d is above share %q's priority_default %d: only admins may raise a job above it (qsub -p and qalter -p, PBS's -1024..1023, need no admin)",
		p, sh.Name, sh.PriorityDefault)
}
