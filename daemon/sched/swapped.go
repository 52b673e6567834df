package sched

import "fmt"

// place is j's key in its share's queue after Priority and Order.
func (j *job) place() uint64 {
	if j.Place != 0 {
		return j.Place
	}
	return j.Seq
}

// swapped applies Swapped: both jobs leave the queue (and any reservation
// they held), exchange Priority, Order and place, and go back.
func (s *Scheduler) swapped(e Swapped) error {
	a, err := s.lookup(e.A)
	if err != nil {
		return err
	}
	b, err := s.lookup(e.B)
	if err != nil {
		return err
	}
	for _, j := range []*job{a, b} {
		switch {
		case j.state != Pending:
			return fmt.Errorf("%w: job %s is not pending", ErrInvalid, j.ID)
		case j.sub || j.arr != nil:
			return fmt.Errorf("%w: job %s is an array or a subjob", ErrInvalid, j.ID)
		}
	}
	switch {
	case a == b:
		return fmt.Errorf("%w: job %s swapped with itself", ErrInvalid, a.ID)
	case a.share != b.share:
		return fmt.Errorf("%w: jobs %s and %s are in different shares", ErrInvalid, a.ID, b.ID)
	}
	for _, j := range []*job{a, b} {
		if j.nom != nil {
			s.releaseNom(j.nom)
		}
		s.queueRemove(j)
	}
	pa, pb := a.place(), b.place()
	a.Priority, b.Priority = b.Priority, a.Priority
	a.Order, b.Order = b.Order, a.Order
	a.Place, b.Place = pb, pa
	s.refresh(a)
	s.refresh(b)
	s.markDirty(a.share)
	return nil
}
