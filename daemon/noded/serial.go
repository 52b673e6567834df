package noded

import "sync"

// serial runs functions one at a time per key, in the order they were
// given, and functions of different keys concurrently: every order and
// event of one job is handled in sequence, while a slow container start
// does not hold up another job's stop.
type serial struct {
	mu     sync.Mutex
	queues map[string][]func() // a key is present while its worker runs
	wg     sync.WaitGroup
}

func newSerial() *serial { return &serial{queues: map[string][]func(){}} }

// Do queues fn behind the functions already queued for key.
func (s *serial) Do(key string, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, busy := s.queues[key]
	s.queues[key] = append(q, fn)
	if !busy {
		s.wg.Add(1)
		go s.drain(key)
	}
}

func (s *serial) drain(key string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		q := s.queues[key]
		if len(q) == 0 {
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		fn := q[0]
		q[0] = nil
		s.queues[key] = q[1:]
		s.mu.Unlock()
		fn()
	}
}

// Wait returns once every queued function has run.
func (s *serial) Wait() { s.wg.Wait() }
