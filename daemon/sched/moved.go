package sched

import "fmt"

// moved applies Moved: the job leaves its share's queue (and any
// reservation it held there) and joins the other share's, with the
// priority and order it has there. Whether it can ever run in the new
// share is checked again (a quota may be smaller).
func (s *Scheduler) moved(e Moved) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	switch {
	case j.state != Pending:
		return fmt.Errorf("%w: job %s is not pending", ErrInvalid, e.ID)
	case j.sub:
		return fmt.Errorf("%w: job %s is a subjob: it moves with its array", ErrInvalid, e.ID)
	case j.arr != nil && (j.arr.pos > 0 || len(j.arr.running) > 0 || j.arr.pendingSub > 0):
		return fmt.Errorf("%w: array %s has begun", ErrInvalid, e.ID)
	}
	sh := s.shareByName[e.Share]
	if sh == nil || sh.removed {
		return fmt.Errorf("%w: job %s: unknown share %q", ErrInvalid, e.ID, e.Share)
	}
	if sh.part != j.share.part {
		return fmt.Errorf("%w: job %s: share %s is in another partition", ErrInvalid, e.ID, e.Share)
	}
	if e.Priority < 0 || e.Priority > maxPriority {
		return fmt.Errorf("%w: job %s: priority %d (0..%d)", ErrInvalid, e.ID, e.Priority, maxPriority)
	}
	if badOrder(e.Order) {
		return fmt.Errorf("%w: job %s: order %d (%d..%d)", ErrInvalid, e.ID, e.Order, MinOrder, MaxOrder)
	}
	if sh == j.share {
		s.reposition(j, e.Priority, e.Order)
		s.refresh(j)
		return nil
	}
	if j.nom != nil {
		s.releaseNom(j.nom)
	}
	s.queueRemove(j)
	old := j.share
	old.pending--
	s.markDirty(old)
	j.share, j.Share, j.Priority, j.Order = sh, sh.cfg.Name, e.Priority, e.Order
	sh.pending++
	s.checkNeverFits(j, holdOrRelease)
	s.refresh(j)
	return nil
}
