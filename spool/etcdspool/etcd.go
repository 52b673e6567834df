package etcdspool

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sharq-hpc/sharq/spool"
)

// schemaVersion is the layout this package writes and understands.
const schemaVersion = 1

// Defaults of Options.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 3 << 19 // 1.5 MiB, etcd's --max-request-bytes default
)

// scanPage is how many records Scan and Purge read per range request.
const scanPage = 1024

// requestSlack is what a chunk leaves of MaxRequestBytes for keys, the
// fence and protobuf framing.
const requestSlack = 64 << 10

// ErrFenced: the write's fence did not hold (this controller is not the
// leader any more); nothing was written.
var ErrFenced = errors.New("fenced out: not the leader")

// Options configure Open.
type Options struct {
	// Prefix is where the spool lives in etcd, e.g. "/sharq/lab/". It must
	// end with '/'.
	Prefix string
	// Fence returns the comparisons every write carries (nil: unfenced,
	// for a single controller or tools).
	Fence func() []clientv3.Cmp
	// Timeout bounds each etcd call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTxnOps and MaxRequestBytes are the cluster's --max-txn-ops and
	// --max-request-bytes; 0 means etcd's defaults.
	MaxTxnOps       int
	MaxRequestBytes int
}

// Etcd is the etcd-backed spool.Spool. Create it with Open.
type Etcd struct {
	cli  *clientv3.Client
	opts Options
	pfx  string

	idMu sync.Mutex // serializes NextIDs (one counter)

	mu     sync.RWMutex // held shared by operations, exclusively by Close
	closed bool
}

var _ spool.Spool = (*Etcd)(nil)

// Open opens (creating if needed) the spool under opts.Prefix. cli stays
// the caller's: Close does not close it.
func Open(ctx context.Context, cli *clientv3.Client, opts Options) (*Etcd, error) {
	if opts.Prefix == "" || !strings.HasSuffix(opts.Prefix, "/") {
		return nil, fmt.Errorf("etcd spool: prefix %q must end with '/'", opts.Prefix)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	if opts.MaxTxnOps < 8 {
		return nil, fmt.Errorf("etcd spool: MaxTxnOps %d is too small (at least 8)", opts.MaxTxnOps)
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.MaxRequestBytes < spool.MaxRecordSize+2*requestSlack {
		return nil, fmt.Errorf("etcd spool: MaxRequestBytes %d cannot carry a %d byte record", opts.MaxRequestBytes, spool.MaxRecordSize)
	}
	e := &Etcd{cli: cli, opts: opts, pfx: opts.Prefix}
	if err := e.init(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Etcd) keySchema() string        { return e.pfx + "meta/schema" }
func (e *Etcd) keyNext() string          { return e.pfx + "meta/next" }
func (e *Etcd) jobsPrefix() string       { return e.pfx + "jobs/" }
func (e *Etcd) finPrefix() string        { return e.pfx + "fin/" }
func (e *Etcd) jobKey(k []byte) string   { return e.jobsPrefix() + hex.EncodeToString(k) }
func (e *Etcd) finKey(k []byte) string   { return e.finPrefix() + hex.EncodeToString(k) }
func (e *Etcd) stateKey(k string) string { return e.pfx + "state/" + k }

// init writes the schema of a new spool or checks an existing one.
func (e *Etcd) init(ctx context.Context) error {
	for try := 0; try < 2; try++ {
		resp, err := e.txn(ctx, e.fence(clientv3.Compare(clientv3.CreateRevision(e.keySchema()), "=", 0)),
			[]clientv3.Op{clientv3.OpPut(e.keySchema(), string(u64(schemaVersion))), clientv3.OpPut(e.keyNext(), string(u64(1)))},
			[]clientv3.Op{clientv3.OpGet(e.keySchema()), clientv3.OpGet(e.keyNext())})
		if err != nil {
			return e.wrap(ctx, "open", err)
		}
		if resp.Succeeded {
			return nil
		}
		schema := resp.Responses[0].GetResponseRange().Kvs
		if len(schema) == 0 {
			continue // not created, so the fence failed; try once more to tell
		}
		v := schema[0].Value
		if len(v) != 8 {
			return fmt.Errorf("etcd spool %s: schema version malformed: %w", e.pfx, spool.ErrSchema)
		}
		switch ver := binary.BigEndian.Uint64(v); {
		case ver > schemaVersion:
			return fmt.Errorf("etcd spool %s: schema version %d was written by a newer sharq; this one knows up to %d: %w", e.pfx, ver, schemaVersion, spool.ErrSchema)
		case ver < 1:
			return fmt.Errorf("etcd spool %s: schema version %d is invalid: %w", e.pfx, ver, spool.ErrSchema)
		}
		if next := resp.Responses[1].GetResponseRange().Kvs; len(next) != 1 || len(next[0].Value) != 8 {
			return fmt.Errorf("etcd spool %s: next job number missing: %w", e.pfx, spool.ErrCorrupt)
		}
		return nil
	}
	return fmt.Errorf("etcd spool %s: create schema: %w", e.pfx, ErrFenced)
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// fence prepends the fence's comparisons to cmps.
func (e *Etcd) fence(cmps ...clientv3.Cmp) []clientv3.Cmp {
	if e.opts.Fence == nil {
		return cmps
	}
	return append(e.opts.Fence(), cmps...)
}

// fenceLen is how many comparisons the fence adds.
func (e *Etcd) fenceLen() int {
	if e.opts.Fence == nil {
		return 0
	}
	return len(e.opts.Fence())
}

// callCtx bounds one etcd call by Options.Timeout.
func (e *Etcd) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.opts.Timeout)
}

// wrap turns an etcd error into one that says why: the caller's context
// error as is, a refused or unanswered write as spool.ErrUnavailable.
func (e *Etcd) wrap(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("etcd spool: %s: %w", what, cerr)
	}
	switch {
	case errors.Is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("etcd spool: %s: etcd refuses writes, its database is over its quota (NOSPACE alarm: compact, defrag, then etcdctl alarm disarm): %w", what, spool.ErrUnavailable)
	case errors.Is(err, context.DeadlineExceeded), status.Code(err) == codes.DeadlineExceeded,
		errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrNoLeader),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail), errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		return fmt.Errorf("etcd spool: %s: etcd did not commit within %v (no quorum, or no member reachable): %v: %w", what, e.opts.Timeout, err, spool.ErrUnavailable)
	case status.Code(err) == codes.Unavailable:
		return fmt.Errorf("etcd spool: %s: etcd unavailable: %v: %w", what, err, spool.ErrUnavailable)
	}
	return fmt.Errorf("etcd spool: %s: %w", what, err)
}

// acquire checks ctx and the closed flag and holds the spool open until
// release is called.
func (e *Etcd) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, spool.ErrClosed
	}
	return e.mu.RUnlock, nil
}

// commit runs one fenced write transaction of ops (under the fence and
// cmps); a fence that fails gives ErrFenced.
func (e *Etcd) commit(ctx context.Context, what string, cmps []clientv3.Cmp, ops []clientv3.Op) (*clientv3.TxnResponse, error) {
	resp, err := e.txn(ctx, e.fence(cmps...), ops, nil)
	if err != nil {
		return nil, e.wrap(ctx, what, err)
	}
	if !resp.Succeeded {
		return resp, fmt.Errorf("etcd spool: %s: %w", what, ErrFenced)
	}
	return resp, nil
}

// txn runs one write transaction (If cmps Then then Else els) within
// Options.Timeout, trying again when a member died under it (retryable),
// since etcd's client retries only reads by itself: its connection broke
// (the gRPC status Unavailable, e.g. EOF), or the member that took it
// forwarded it to a raft leader that died. Each try is bounded by half the
// timeout, so a proposal lost with a dead raft leader (for which the
// member waits its own request timeout, 5 s and two election timeouts) is
// sent again to the leader elected meanwhile, within the timeout.
//
// Every transaction of this package may run twice: its puts write the same
// values, its deletes delete the same keys, and a compare that the first
// run made false (NextIDs' counter, the schema's creation) fails the
// second run, which its caller reads as a moved counter or an existing
// schema.
func (e *Etcd) txn(ctx context.Context, cmps []clientv3.Cmp, then, els []clientv3.Op) (*clientv3.TxnResponse, error) {
	cctx, cancel := e.callCtx(ctx)
	defer cancel()
	for delay := retryDelay; ; delay = min(2*delay, maxRetryDelay) {
		actx, acancel := context.WithTimeout(cctx, max(e.opts.Timeout/2, minTry))
		resp, err := e.cli.Txn(actx).If(cmps...).Then(then...).Else(els...).Commit()
		tryTimedOut := err != nil && actx.Err() != nil && cctx.Err() == nil
		acancel()
		if err == nil || (!retryable(err) && !tryTimedOut) || !sleepCtx(cctx, delay) {
			return resp, err
		}
	}
}

// minTry is the least time one try of a write is given.
const minTry = 500 * time.Millisecond

// Pauses between the tries of a write whose member died.
const (
	retryDelay    = 20 * time.Millisecond
	maxRetryDelay = 500 * time.Millisecond
)

// retryable reports whether a write failed because a member died: its
// connection broke, or the raft leader it was proposed to went away (the
// member that took it gives up after its request timeout, or says there
// is no leader while the others elect one), so that it may be sent again.
func retryable(err error) bool {
	for _, e := range []error{rpctypes.ErrTimeout, rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost,
		rpctypes.ErrNoLeader, rpctypes.ErrLeaderChanged} {
		if errors.Is(err, e) {
			return true
		}
	}
	return status.Code(err) == codes.Unavailable
}

// sleepCtx waits d, or less when ctx ends first; it reports whether ctx
// is still live (and leaves time for another try).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return ctx.Err() == nil
	}
}

// NextIDs implements spool.Spool.
func (e *Etcd) NextIDs(ctx context.Context, n int) (uint64, error) {
	if n < 1 {
		return 0, errors.New("etcd spool: NextIDs: n must be >= 1")
	}
	release, err := e.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	e.idMu.Lock()
	defer e.idMu.Unlock()
	for try := 0; ; try++ {
		cctx, cancel := e.callCtx(ctx)
		resp, err := e.cli.Get(cctx, e.keyNext())
		cancel()
		if err != nil {
			return 0, e.wrap(ctx, "NextIDs", err)
		}
		if len(resp.Kvs) != 1 || len(resp.Kvs[0].Value) != 8 {
			return 0, fmt.Errorf("etcd spool: next job number missing: %w", spool.ErrCorrupt)
		}
		kv := resp.Kvs[0]
		first := binary.BigEndian.Uint64(kv.Value)
		if first < 1 || uint64(n) > 1<<63-1-first {
			return 0, fmt.Errorf("etcd spool: NextIDs(%d): job numbers exhausted at %d", n, first)
		}
		_, err = e.commit(ctx, "NextIDs",
			[]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(e.keyNext()), "=", kv.ModRevision)},
			[]clientv3.Op{clientv3.OpPut(e.keyNext(), string(u64(first+uint64(n))))})
		if err == nil {
			return first, nil
		}
		if !errors.Is(err, ErrFenced) || try == 3 {
			return 0, err
		}
		// The counter moved (a Put raised it) or the fence failed: the
		// next round tells them apart.
		if ferr := e.checkFence(ctx); ferr != nil {
			return 0, ferr
		}
	}
}

// checkFence commits an empty fenced transaction.
func (e *Etcd) checkFence(ctx context.Context) error {
	_, err := e.commit(ctx, "check fence", nil, nil)
	return err
}

type encoded struct {
	id       string
	key      []byte
	val      string
	finished time.Time
}

// Put implements spool.Spool: the records go out in fenced chunks.
func (e *Etcd) Put(ctx context.Context, recs ...spool.Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	// Validate everything first; the last record of an id wins.
	enc := make([]encoded, 0, len(recs))
	pos := make(map[string]int, len(recs))
	var maxNum uint64
	for _, r := range recs {
		k, err := spool.SortKey(r.ID)
		if err != nil {
			return err
		}
		if err := spool.CheckSize(r); err != nil {
			return err
		}
		if num := binary.BigEndian.Uint64(k); num > maxNum {
			maxNum = num
		}
		en := encoded{id: r.ID, key: k, val: string(spool.EncodeValue(r)), finished: r.Finished}
		if i, ok := pos[string(k)]; ok {
			enc[i] = en
			continue
		}
		pos[string(k)] = len(enc)
		enc = append(enc, en)
	}
	release, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	// Keep NextIDs above every stored job number: a nested transaction
	// raises the counter when it is below (8-byte big-endian values compare
	// as numbers). It rides in the first chunk.
	raise := clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.Value(e.keyNext()), "<", string(u64(maxNum+1)))},
		[]clientv3.Op{clientv3.OpPut(e.keyNext(), string(u64(maxNum+1)))}, nil)
	budget := e.opts.MaxRequestBytes - requestSlack
	ops := []clientv3.Op{raise}
	nrec, bytes := 0, 0
	for i, en := range enc {
		size := len(en.val) + 2*len(e.jobKey(en.key))
		if nrec > 0 && (len(ops)+2 > e.opts.MaxTxnOps || bytes+size > budget) {
			if _, err := e.commit(ctx, fmt.Sprintf("put %d records (%s...)", nrec, enc[i-nrec].id), nil, ops); err != nil {
				return err
			}
			ops, nrec, bytes = ops[:0], 0, 0
		}
		ops = append(ops, clientv3.OpPut(e.jobKey(en.key), en.val))
		if en.finished.IsZero() {
			ops = append(ops, clientv3.OpDelete(e.finKey(en.key)))
		} else {
			ops = append(ops, clientv3.OpPut(e.finKey(en.key), string(finTime(en.finished))))
		}
		nrec++
		bytes += size
	}
	if _, err := e.commit(ctx, fmt.Sprintf("put %d records", nrec), nil, ops); err != nil {
		return err
	}
	return nil
}

// finTime encodes a finish time: Unix seconds (8 bytes, two's complement),
// nanoseconds (4 bytes), big endian.
func finTime(t time.Time) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint64(b[0:8], uint64(t.Unix()))
	binary.BigEndian.PutUint32(b[8:12], uint32(t.Nanosecond()))
	return b
}

func parseFinTime(b []byte) (time.Time, error) {
	if len(b) != 12 {
		return time.Time{}, fmt.Errorf("etcd spool: finish index value of %d bytes: %w", len(b), spool.ErrCorrupt)
	}
	ns := binary.BigEndian.Uint32(b[8:12])
	if ns >= 1e9 {
		return time.Time{}, fmt.Errorf("etcd spool: finish index nanoseconds %d: %w", ns, spool.ErrCorrupt)
	}
	return time.Unix(int64(binary.BigEndian.Uint64(b[0:8])), int64(ns)), nil
}

// Delete implements spool.Spool, in fenced chunks.
func (e *Etcd) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return ctx.Err()
	}
	keys := make(map[string][]byte, len(ids))
	for _, id := range ids {
		k, err := spool.SortKey(id)
		if err != nil {
			return err
		}
		keys[string(k)] = k
	}
	release, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	var ops []clientv3.Op
	for _, k := range keys {
		ops = append(ops, clientv3.OpDelete(e.jobKey(k)), clientv3.OpDelete(e.finKey(k)))
		if len(ops)+2 > e.opts.MaxTxnOps {
			if _, err := e.commit(ctx, fmt.Sprintf("delete %d records", len(ops)/2), nil, ops); err != nil {
				return err
			}
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		if _, err := e.commit(ctx, fmt.Sprintf("delete %d records", len(ops)/2), nil, ops); err != nil {
			return err
		}
	}
	return nil
}

// Get implements spool.Spool (a linearizable read).
func (e *Etcd) Get(ctx context.Context, id string) (spool.Record, error) {
	k, err := spool.SortKey(id)
	if err != nil {
		return spool.Record{}, err
	}
	release, err := e.acquire(ctx)
	if err != nil {
		return spool.Record{}, err
	}
	defer release()
	cctx, cancel := e.callCtx(ctx)
	defer cancel()
	resp, err := e.cli.Get(cctx, e.jobKey(k))
	if err != nil {
		return spool.Record{}, e.wrap(ctx, "get "+id, err)
	}
	if len(resp.Kvs) == 0 {
		return spool.Record{}, fmt.Errorf("etcd spool: job %s: %w", id, spool.ErrNotFound)
	}
	return spool.DecodeValue(id, resp.Kvs[0].Value)
}

// Scan implements spool.Spool: pages of scanPage records, each a
// linearizable range read, with fn called outside of any request.
func (e *Etcd) Scan(ctx context.Context, fn func(spool.Record) error) error {
	from := e.jobsPrefix()
	end := clientv3.GetPrefixRangeEnd(from)
	for {
		page, next, err := e.scanPage(ctx, from, end)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		from = next
	}
}

// scanPage reads up to scanPage records from key from; next is where the
// following page starts, "" after the last.
func (e *Etcd) scanPage(ctx context.Context, from, end string) ([]spool.Record, string, error) {
	release, err := e.acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	cctx, cancel := e.callCtx(ctx)
	defer cancel()
	resp, err := e.cli.Get(cctx, from, clientv3.WithRange(end), clientv3.WithLimit(scanPage))
	if err != nil {
		return nil, "", e.wrap(ctx, "scan", err)
	}
	page := make([]spool.Record, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		id, err := e.idOf(string(kv.Key), e.jobsPrefix())
		if err != nil {
			return nil, "", err
		}
		r, err := spool.DecodeValue(id, kv.Value)
		if err != nil {
			return nil, "", err
		}
		page = append(page, r)
	}
	next := ""
	if resp.More && len(resp.Kvs) > 0 {
		next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	return page, next, nil
}

// idOf is the job id of an etcd key under prefix.
func (e *Etcd) idOf(key, prefix string) (string, error) {
	k, err := hex.DecodeString(strings.TrimPrefix(key, prefix))
	if err != nil {
		return "", fmt.Errorf("etcd spool: key %q: %w", key, spool.ErrCorrupt)
	}
	return spool.IDFromKey(k)
}

// Purge implements spool.Spool. Each deletion is conditional on the index
// entry not having changed since it was read, so a record finished again
// (or requeued) meanwhile is left alone.
func (e *Etcd) Purge(ctx context.Context, before time.Time) (int, error) {
	release, err := e.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	type victim struct {
		key []byte
		rev int64
	}
	var victims []victim
	from, end := e.finPrefix(), clientv3.GetPrefixRangeEnd(e.finPrefix())
	for {
		cctx, cancel := e.callCtx(ctx)
		resp, err := e.cli.Get(cctx, from, clientv3.WithRange(end), clientv3.WithLimit(scanPage))
		cancel()
		if err != nil {
			return 0, e.wrap(ctx, "purge", err)
		}
		for _, kv := range resp.Kvs {
			t, err := parseFinTime(kv.Value)
			if err != nil {
				return 0, err
			}
			if !t.Before(before) {
				continue
			}
			k, err := hex.DecodeString(strings.TrimPrefix(string(kv.Key), e.finPrefix()))
			if err != nil {
				return 0, fmt.Errorf("etcd spool: key %q: %w", kv.Key, spool.ErrCorrupt)
			}
			victims = append(victims, victim{k, kv.ModRevision})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	n := 0
	per := e.opts.MaxTxnOps - e.fenceLen()
	for len(victims) > 0 {
		chunk := victims[:min(per, len(victims))]
		victims = victims[len(chunk):]
		ops := make([]clientv3.Op, len(chunk))
		for i, v := range chunk {
			ops[i] = clientv3.OpTxn(
				[]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(e.finKey(v.key)), "=", v.rev)},
				[]clientv3.Op{clientv3.OpDelete(e.jobKey(v.key)), clientv3.OpDelete(e.finKey(v.key))}, nil)
		}
		resp, err := e.commit(ctx, fmt.Sprintf("purge before %s", before.Format(time.RFC3339)), nil, ops)
		if err != nil {
			return n, err
		}
		for _, r := range resp.Responses {
			if r.GetResponseTxn().GetSucceeded() {
				n++
			}
		}
	}
	return n, nil
}

// SetState implements spool.Spool.
func (e *Etcd) SetState(ctx context.Context, key string, value []byte) error {
	if err := spool.CheckStateSize(key, value); err != nil {
		return err
	}
	release, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := clientv3.OpPut(e.stateKey(key), string(value))
	if value == nil {
		op = clientv3.OpDelete(e.stateKey(key))
	}
	_, err = e.commit(ctx, "set state "+key, nil, []clientv3.Op{op})
	return err
}

// State implements spool.Spool.
func (e *Etcd) State(ctx context.Context, key string) ([]byte, error) {
	release, err := e.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	cctx, cancel := e.callCtx(ctx)
	defer cancel()
	resp, err := e.cli.Get(cctx, e.stateKey(key))
	if err != nil {
		return nil, e.wrap(ctx, "state "+key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0].Value, nil
}

// Close implements spool.Spool; it waits for calls in progress and leaves
// the client open.
func (e *Etcd) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

// Prefix returns the spool's key prefix in etcd.
func (e *Etcd) Prefix() string { return e.pfx }
