package ctld

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/conf"
)

// history is the controller's side of the job history. The loop hands it
// finished jobs' records and share samples without ever waiting (add and
// sample only append under a mutex); one goroutine (run) writes them to the
// store, retrying with backoff while the store is unreachable, and then
// tells the loop which jobs are recorded. A finished job's spool record
// says whether it was recorded (api.Usage.Recorded), so the records not
// yet written when the controller dies are replayed on restart: the spool
// is the outbox. Writes are idempotent, so a record replayed after it was
// written changes nothing.
type history struct {
	log  *slog.Logger
	met  *metrics
	open func(context.Context) (acct.Store, error)
	// retention is how long the store keeps records (purged hourly).
	retention time.Duration
	// recorded is called (from run's goroutine) with the ids just written.
	recorded func(ctx context.Context, ids []string)
	// overflowed is called when the queue dropped records (they are still
	// in the spool, unrecorded) and has drained: the loop queues them again.
	overflowed func(ctx context.Context)

	mu       sync.Mutex
	store    acct.Store // nil until opened
	lastErr  error
	recs     []acct.Record
	samples  []acct.ShareSample
	overflow bool
	wake     chan struct{}
	// tried is closed once the first open has succeeded or failed.
	tried     chan struct{}
	triedOnce sync.Once
}

// Bounds of the in-memory queue. Records beyond it wait in the spool.
const (
	maxQueuedSamples = 10_000
	historyBatch     = 500
	historyTimeout   = 30 * time.Second
	historyLinger    = 100 * time.Millisecond
)

// maxQueuedRecords bounds the records waiting in memory (a variable for
// the tests).
var maxQueuedRecords = 100_000

// historyMaxBackoff is the longest wait between retries while the store is
// unreachable (tests shorten it).
var historyMaxBackoff = 30 * time.Second

// errHistoryOff: the configuration has no history.
var errHistoryOff = errors.New("job history is off ([accounting] backend = \"off\")")

// newHistory prepares the writer for cfg; store, when not nil, is used
// instead of opening the configured one (tests). It returns nil when the
// history is off.
func newHistory(cfg conf.Accounting, store acct.Store, log *slog.Logger, met *metrics) *history {
	h := &history{log: log, met: met, retention: cfg.Retention, wake: make(chan struct{}, 1), tried: make(chan struct{})}
	switch {
	case store != nil:
		h.open = func(context.Context) (acct.Store, error) { return store, nil }
	case cfg.Backend == conf.HistoryOff:
		return nil
	case cfg.Backend == conf.HistoryPostgres:
		dsn := cfg.DSN
		h.open = func(ctx context.Context) (acct.Store, error) {
			s, err := acct.OpenPostgres(ctx, dsn)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
	default:
		path := cfg.Path
		h.open = func(ctx context.Context) (acct.Store, error) {
			s, err := acct.OpenSQLite(ctx, path)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	return h
}

func (h *history) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// add queues finished jobs' records. It never blocks on the store.
func (h *history) add(recs ...acct.Record) {
	if h == nil || len(recs) == 0 {
		return
	}
	h.mu.Lock()
	room := maxQueuedRecords - len(h.recs)
	if room < len(recs) {
		h.overflow = true
		recs = recs[:max(room, 0)]
	}
	h.recs = append(h.recs, recs...)
	n := len(h.recs)
	h.mu.Unlock()
	h.met.historyQueue.Set(float64(n))
	h.signal()
}

// sample queues share samples; the oldest go first when the queue is full.
func (h *history) sample(xs ...acct.ShareSample) {
	if h == nil || len(xs) == 0 {
		return
	}
	h.mu.Lock()
	h.samples = append(h.samples, xs...)
	if over := len(h.samples) - maxQueuedSamples; over > 0 {
		h.samples = h.samples[over:]
	}
	h.mu.Unlock()
	h.signal()
}

// get returns the store for reads (reports, qstat -x), or why there is none.
// Right after the controller starts it waits for the first open.
func (h *history) get(ctx context.Context) (acct.Store, error) {
	if h == nil {
		return nil, errHistoryOff
	}
	select {
	case <-h.tried:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.store == nil {
		if h.lastErr != nil {
			return nil, fmt.Errorf("job history unavailable: %w", h.lastErr)
		}
		return nil, errors.New("job history not open yet")
	}
	return h.store, nil
}

// queued reports how many records wait to be written.
func (h *history) queued() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.recs)
}

// run writes the queue until ctx ends, then closes the store.
func (h *history) run(ctx context.Context) {
	backoff := min(time.Second, historyMaxBackoff)
	fail := func(what string, err error) {
		h.met.historyErrors.Inc()
		h.mu.Lock()
		first := h.lastErr == nil
		h.lastErr = err
		h.mu.Unlock()
		if first {
			h.log.Error("job history: "+what+"; records wait in the spool and are retried", "err", err)
		} else {
			h.log.Debug("job history: "+what, "err", err)
		}
		h.triedOnce.Do(func() { close(h.tried) })
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, historyMaxBackoff)
	}
	recovered := func() {
		backoff = min(time.Second, historyMaxBackoff)
		h.mu.Lock()
		was := h.lastErr
		h.lastErr = nil
		h.mu.Unlock()
		if was != nil {
			h.log.Info("job history: writing again")
		}
	}
	var store acct.Store
	defer func() {
		if store != nil {
			store.Close()
		}
	}()
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	needPurge := true
	for ctx.Err() == nil {
		if store == nil {
			octx, cancel := context.WithTimeout(ctx, historyTimeout)
			s, err := h.open(octx)
			cancel()
			if err != nil {
				fail("open", err)
				continue
			}
			store = s
			h.mu.Lock()
			h.store = s
			h.mu.Unlock()
			h.triedOnce.Do(func() { close(h.tried) })
			recovered()
		}
		if needPurge {
			h.purge(ctx, store)
			needPurge = false
		}
		// The records stay queued until written (add only appends behind
		// them); the samples are taken out and put back on failure (sample
		// may drop the oldest meanwhile).
		h.mu.Lock()
		recs := h.recs[:min(len(h.recs), historyBatch)]
		samples := h.samples
		h.samples = nil
		overflow := h.overflow && len(h.recs) == 0
		h.mu.Unlock()
		if len(recs)+len(samples) == 0 {
			if overflow {
				h.mu.Lock()
				h.overflow = false
				h.mu.Unlock()
				h.overflowed(ctx)
				continue
			}
			select {
			case <-ctx.Done():
			case <-h.wake:
				// Let a burst gather: one synced transaction for many jobs,
				// not one per job beside the spool's own fsyncs.
				select {
				case <-ctx.Done():
				case <-time.After(historyLinger):
				}
			case <-purge.C:
				needPurge = true
			}
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, historyTimeout)
		start := time.Now()
		err := store.Sample(wctx, samples...)
		if err == nil {
			err = store.Record(wctx, recs...)
		}
		cancel()
		if errors.Is(err, acct.ErrInvalid) {
			// Not the store's fault: write one by one, dropping what it refuses.
			err = h.dropInvalid(ctx, store, recs)
		}
		if err != nil {
			h.mu.Lock()
			h.samples = append(samples, h.samples...)
			if over := len(h.samples) - maxQueuedSamples; over > 0 {
				h.samples = h.samples[over:]
			}
			h.mu.Unlock()
			fail("write", err)
			continue
		}
		h.met.historyWrite.Observe(time.Since(start).Seconds())
		recovered()
		h.mu.Lock()
		h.recs = h.recs[len(recs):]
		n := len(h.recs)
		h.mu.Unlock()
		h.met.historyQueue.Set(float64(n))
		h.met.historyRecords.Add(float64(len(recs)))
		if len(recs) > 0 {
			ids := make([]string, len(recs))
			for i, r := range recs {
				ids[i] = r.ID
			}
			h.recorded(ctx, ids)
		}
	}
}

// dropInvalid writes recs one at a time and logs and drops the ones the
// store refuses as invalid; any other error stops it (the batch is retried).
func (h *history) dropInvalid(ctx context.Context, store acct.Store, recs []acct.Record) error {
	for _, r := range recs {
		wctx, cancel := context.WithTimeout(ctx, historyTimeout)
		err := store.Record(wctx, r)
		cancel()
		switch {
		case errors.Is(err, acct.ErrInvalid):
			h.met.historyErrors.Inc()
			h.log.Error("job history: record refused", "job", r.ID, "err", err)
		case err != nil:
			return err
		}
	}
	return nil
}

// purge drops what is older than the retention.
func (h *history) purge(ctx context.Context, store acct.Store) {
	if h.retention <= 0 {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	n, err := store.Purge(pctx, time.Now().Add(-h.retention))
	if err != nil {
		h.log.Error("job history: purge", "err", err)
		return
	}
	if n > 0 {
		h.log.Info("job history: purged old records", "count", n, "older_than", h.retention)
	}
}

// newHistory sets up the controller's history writer (nil when off).
func (c *Controller) newHistory(cfg conf.Accounting, store acct.Store) *history {
	h := newHistory(cfg, store, c.log, c.met)
	if h == nil {
		return nil
	}
	h.recorded = func(ctx context.Context, ids []string) {
		c.post(ctx, func() {
			for _, id := range ids {
				if j := c.jobs[id]; j != nil && j.finished() && !j.Acct.Recorded {
					j.Acct.Recorded = true
					c.markDirty(id)
				}
			}
		})
	}
	h.overflowed = func(ctx context.Context) { c.post(ctx, c.replayHistory) }
	return h
}

// replayHistory queues the finished jobs the history does not have yet
// (after a restart, or after the queue overflowed), oldest first.
func (c *Controller) replayHistory() {
	if c.hist == nil {
		return
	}
	var todo []*job
	for _, j := range c.jobs {
		if j.finished() && !j.Acct.Recorded {
			todo = append(todo, j)
		}
	}
	slices.SortFunc(todo, func(a, b *job) int { return a.EndTime.Compare(b.EndTime) })
	recs := make([]acct.Record, len(todo))
	for i, j := range todo {
		recs[i] = historyRecord(&j.Job)
	}
	if len(recs) > 0 {
		c.log.Info("job history: replaying records not yet written", "jobs", len(recs))
	}
	c.hist.add(recs...)
}

// sampleShares queues each share's standing over the interval that ends now.
func (c *Controller) sampleShares(now time.Time) {
	secs := now.Sub(c.lastSample).Seconds()
	c.lastSample = now
	if secs <= 0 {
		return
	}
	secs = min(secs, 86400)
	capacity := map[string]int{}
	for _, n := range c.core.Nodes() {
		if n.Up && !n.Drained {
			capacity[n.Partition] += n.GPUs
		}
	}
	var xs []acct.ShareSample
	for _, u := range c.core.Shares() {
		xs = append(xs, acct.ShareSample{Time: now, Seconds: secs, Share: u.Share, Partition: u.Partition,
			PartitionGPUs: capacity[u.Partition], Quota: u.Quota, InUse: u.InUse, Borrowed: u.Borrowed, Lent: u.Lent})
	}
	c.hist.sample(xs...)
}
