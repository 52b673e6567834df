package sim

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress draws a one-line progress bar (for a terminal) of jobs ended out
// of a total. It is safe for concurrent use: Compare's runs share one.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  []int // per run
	last  time.Time
	start time.Time
}

// NewProgress draws on w a bar for runs simulations of total jobs each.
func NewProgress(w io.Writer, total, runs int) *Progress {
	return &Progress{w: w, total: total * runs, done: make([]int, runs), start: time.Now()}
}

// Func returns the Options.Progress callback of run i.
func (p *Progress) Func(i int) func(int) {
	return func(ended int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done[i] = ended
		if time.Since(p.last) < 100*time.Millisecond {
			return
		}
		p.last = time.Now()
		p.draw()
	}
}

func (p *Progress) draw() {
	sum := 0
	for _, d := range p.done {
		sum += d
	}
	frac := float64(sum) / float64(max(p.total, 1))
	const width = 40
	n := min(width, int(frac*width))
	fmt.Fprintf(p.w, "\r[%s%s] %5.1f%% %d/%d jobs %s", strings.Repeat("=", n), strings.Repeat(" ", width-n),
		100*frac, sum, p.total, time.Since(p.start).Truncate(time.Second))
}

// Done clears the bar.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 80))
}
