package spooltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/spool"
)

// Factory makes spools for Run.
type Factory struct {
	// Open returns a new, empty spool. Run closes it.
	Open func(t *testing.T) spool.Spool
	// Reopen closes old and opens the same storage again. Nil for
	// backends that do not persist (the reopen subtests are then not run).
	Reopen func(t *testing.T, old spool.Spool) spool.Spool
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, f Factory) {
	c := &suite{f: f}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"PutGet", c.putGet},
		{"Overwrite", c.overwrite},
		{"PutBadIDIsAtomic", c.putBadIDIsAtomic},
		{"BadIDs", c.badIDs},
		{"TooLargeIsAtomic", c.tooLargeIsAtomic},
		{"PutManyLargeRecords", c.putManyLarge},
		{"GetNotFound", c.getNotFound},
		{"DataIsCopied", c.dataIsCopied},
		{"Delete", c.delete},
		{"ScanOrder", c.scanOrder},
		{"ScanManyPages", c.scanManyPages},
		{"ScanStops", c.scanStops},
		{"ScanCallbackWrites", c.scanCallbackWrites},
		{"Purge", c.purge},
		{"PurgeFollowsOverwrite", c.purgeFollowsOverwrite},
		{"NextIDs", c.nextIDs},
		{"NextIDsAbovePut", c.nextIDsAbovePut},
		{"ContextCanceled", c.contextCanceled},
		{"Concurrent", c.concurrent},
		{"State", c.state},
		{"StateUsage", c.stateUsage},
		{"Closed", c.closed},
	}
	if f.Reopen != nil {
		tests = append(tests, []struct {
			name string
			fn   func(t *testing.T)
		}{
			{"ReopenKeepsRecords", c.reopenKeepsRecords},
			{"ReopenNextIDsNeverReused", c.reopenNextIDs},
			{"ReopenKeepsState", c.reopenState},
			{"ReopenKeepsUsageState", c.reopenUsageState},
			{"ReopenAfterEachWrite", c.reopenAfterEachWrite},
		}...)
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.fn)
	}
}

type suite struct{ f Factory }

func (c *suite) open(t *testing.T) spool.Spool {
	t.Helper()
	s := c.f.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func (c *suite) reopen(t *testing.T, old spool.Spool) spool.Spool {
	t.Helper()
	s := c.f.Reopen(t, old)
	t.Cleanup(func() { s.Close() })
	return s
}

var (
	t0  = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	ctx = context.Background()
)

func rec(id string, finished time.Time) spool.Record {
	return spool.Record{ID: id, Data: []byte(`{"id":"` + id + `","n":` + fmt.Sprint(len(id)) + `}`), Finished: finished}
}

func sameRecord(a, b spool.Record) bool {
	return a.ID == b.ID && bytes.Equal(a.Data, b.Data) && a.Finished.IsZero() == b.Finished.IsZero() && a.Finished.Equal(b.Finished)
}

func mustPut(t *testing.T, s spool.Spool, recs ...spool.Record) {
	t.Helper()
	if err := s.Put(ctx, recs...); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func wantGet(t *testing.T, s spool.Spool, want spool.Record) {
	t.Helper()
	got, err := s.Get(ctx, want.ID)
	if err != nil {
		t.Fatalf("Get(%s): %v", want.ID, err)
	}
	if !sameRecord(got, want) {
		t.Fatalf("Get(%s) = %+v, want %+v", want.ID, fmtRec(got), fmtRec(want))
	}
}

func wantMissing(t *testing.T, s spool.Spool, id string) {
	t.Helper()
	_, err := s.Get(ctx, id)
	if !errors.Is(err, spool.ErrNotFound) {
		t.Fatalf("Get(%s) err = %v, want ErrNotFound", id, err)
	}
}

func fmtRec(r spool.Record) string {
	return fmt.Sprintf("{%s %q fin=%v}", r.ID, r.Data, r.Finished)
}

func scanAll(t *testing.T, s spool.Spool) []spool.Record {
	t.Helper()
	var out []spool.Record
	if err := s.Scan(ctx, func(r spool.Record) error { out = append(out, r); return nil }); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return out
}

func ids(recs []spool.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func (c *suite) putGet(t *testing.T) {
	s := c.open(t)
	cases := []struct {
		name string
		rec  spool.Record
	}{
		{"plain", rec("1.lab", time.Time{})},
		{"array parent", rec("2[].lab", time.Time{})},
		{"subjob", rec("2[7].lab", time.Time{})},
		{"no server", rec("3", time.Time{})},
		{"dotted server", rec("4.ctl.example.org", time.Time{})},
		{"finished", rec("5.lab", t0)},
		{"finished before 1970", rec("6.lab", time.Date(1960, 1, 1, 0, 0, 0, 1, time.UTC))},
		{"finished non-UTC zone", rec("7.lab", t0.In(time.FixedZone("X", 3600)))},
		{"empty data", spool.Record{ID: "8.lab"}},
		{"binary data", spool.Record{ID: "9.lab", Data: []byte{0, 1, 0xff, 0, '\n'}}},
		{"large data", spool.Record{ID: "10.lab", Data: bytes.Repeat([]byte("x"), 200<<10)}},
	}
	all := make([]spool.Record, len(cases))
	for i, tc := range cases {
		all[i] = tc.rec
	}
	mustPut(t, s, all...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantGet(t, s, tc.rec) })
	}
}

func (c *suite) overwrite(t *testing.T) {
	s := c.open(t)
	a := rec("1.lab", time.Time{})
	mustPut(t, s, a)
	a.Data = []byte("second version")
	a.Finished = t0
	mustPut(t, s, a)
	wantGet(t, s, a)
	a.Data = []byte("3")
	a.Finished = time.Time{}
	mustPut(t, s, a)
	wantGet(t, s, a)
	// Same id twice in one Put: the last one wins.
	b1, b2 := rec("2.lab", time.Time{}), rec("2.lab", t0)
	b2.Data = []byte("later")
	mustPut(t, s, b1, b2)
	wantGet(t, s, b2)
	if got := len(scanAll(t, s)); got != 2 {
		t.Fatalf("Scan saw %d records, want 2", got)
	}
}

func (c *suite) putBadIDIsAtomic(t *testing.T) {
	s := c.open(t)
	err := s.Put(ctx, rec("1.lab", time.Time{}), rec("x.lab", time.Time{}))
	if !errors.Is(err, spool.ErrBadID) {
		t.Fatalf("Put with bad id: err = %v, want ErrBadID", err)
	}
	if !strings.Contains(err.Error(), "x.lab") {
		t.Errorf("error %q does not name the id", err)
	}
	wantMissing(t, s, "1.lab")
}

func (c *suite) tooLargeIsAtomic(t *testing.T) {
	s := c.open(t)
	max := spool.Record{ID: "2.lab", Data: bytes.Repeat([]byte("m"), spool.MaxRecordSize)}
	mustPut(t, s, max)
	wantGet(t, s, max)
	big := spool.Record{ID: "3.lab", Data: bytes.Repeat([]byte("b"), spool.MaxRecordSize+1)}
	err := s.Put(ctx, rec("1.lab", time.Time{}), big)
	if !errors.Is(err, spool.ErrTooLarge) {
		t.Fatalf("Put of a %d byte record: err = %v, want ErrTooLarge", len(big.Data), err)
	}
	if !strings.Contains(err.Error(), "3.lab") {
		t.Errorf("error %q does not name the id", err)
	}
	wantMissing(t, s, "1.lab")
	wantMissing(t, s, "3.lab")
}

// putManyLarge puts more bytes in one Put than one etcd request takes.
func (c *suite) putManyLarge(t *testing.T) {
	s := c.open(t)
	var recs []spool.Record
	for i := 1; i <= 12; i++ {
		recs = append(recs, spool.Record{ID: fmt.Sprintf("%d.lab", i), Data: bytes.Repeat([]byte{byte('a' + i)}, 300<<10)})
	}
	mustPut(t, s, recs...)
	got := scanAll(t, s)
	if len(got) != len(recs) {
		t.Fatalf("Scan saw %d records, want %d", len(got), len(recs))
	}
	for i := range got {
		if !sameRecord(got[i], recs[i]) {
			t.Fatalf("record %d differs after a Put of %d bytes", i, 12*300<<10)
		}
	}
}

func (c *suite) badIDs(t *testing.T) {
	s := c.open(t)
	for _, id := range []string{"", "lab", ".lab", "01.lab", "1[.lab", "1[x].lab", "1[01].lab", "1.", "1x", "-1.lab", "1[2]3.lab", "99999999999999999999.lab"} {
		t.Run(id, func(t *testing.T) {
			if err := s.Put(ctx, rec(id, time.Time{})); !errors.Is(err, spool.ErrBadID) {
				t.Errorf("Put(%q) err = %v, want ErrBadID", id, err)
			}
			if _, err := s.Get(ctx, id); !errors.Is(err, spool.ErrBadID) {
				t.Errorf("Get(%q) err = %v, want ErrBadID", id, err)
			}
			if err := s.Delete(ctx, id); !errors.Is(err, spool.ErrBadID) {
				t.Errorf("Delete(%q) err = %v, want ErrBadID", id, err)
			}
		})
	}
}

func (c *suite) getNotFound(t *testing.T) {
	s := c.open(t)
	mustPut(t, s, rec("1.lab", time.Time{}))
	_, err := s.Get(ctx, "2.lab")
	if !errors.Is(err, spool.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "2.lab") {
		t.Errorf("error %q does not name the id", err)
	}
	// Same number, other form: distinct records.
	wantMissing(t, s, "1[].lab")
	wantMissing(t, s, "1[0].lab")
	wantMissing(t, s, "1.other")
	wantMissing(t, s, "1")
}

func (c *suite) dataIsCopied(t *testing.T) {
	s := c.open(t)
	data := []byte("original")
	mustPut(t, s, spool.Record{ID: "1.lab", Data: data})
	copy(data, "XXXXXXXX")
	got, err := s.Get(ctx, "1.lab")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != "original" {
		t.Fatalf("stored data changed with the caller's slice: %q", got.Data)
	}
	copy(got.Data, "YYYYYYYY")
	wantGet(t, s, spool.Record{ID: "1.lab", Data: []byte("original")})
	for _, r := range scanAll(t, s) {
		copy(r.Data, "ZZZZZZZZ")
	}
	wantGet(t, s, spool.Record{ID: "1.lab", Data: []byte("original")})
}

func (c *suite) delete(t *testing.T) {
	s := c.open(t)
	mustPut(t, s, rec("1.lab", time.Time{}), rec("2.lab", t0), rec("3.lab", time.Time{}))
	if err := s.Delete(ctx, "1.lab", "2.lab", "77.lab"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantMissing(t, s, "1.lab")
	wantMissing(t, s, "2.lab")
	wantGet(t, s, rec("3.lab", time.Time{}))
	if got := ids(scanAll(t, s)); !slices.Equal(got, []string{"3.lab"}) {
		t.Fatalf("Scan after Delete = %v", got)
	}
	// The deleted finished record left nothing for Purge.
	if n, err := s.Purge(ctx, t0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("Purge after Delete = %d, %v; want 0, nil", n, err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatalf("Delete(): %v", err)
	}
	// Re-put after delete works.
	mustPut(t, s, rec("1.lab", t0))
	wantGet(t, s, rec("1.lab", t0))
}

func (c *suite) scanOrder(t *testing.T) {
	s := c.open(t)
	want := []string{
		"1.lab", "2.lab", "9.lab",
		"10[].lab", "10[0].lab", "10[2].lab", "10[10].lab", "10[100].lab",
		"11.lab", "100.lab", "101", "101.a", "101.b",
		"1000[].lab", "1000[1].lab", "1000[9].lab", "1000[10].lab",
		"9223372036854775807.lab",
	}
	recs := make([]spool.Record, len(want))
	for i, id := range want {
		var fin time.Time
		if i%3 == 1 {
			fin = t0.Add(time.Duration(-i) * time.Minute)
		}
		recs[i] = rec(id, fin)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shuffled := slices.Clone(recs)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// Two Puts so that order does not depend on one batch.
	mustPut(t, s, shuffled[:7]...)
	mustPut(t, s, shuffled[7:]...)
	got := scanAll(t, s)
	if !slices.Equal(ids(got), want) {
		t.Fatalf("Scan order\n got %v\nwant %v", ids(got), want)
	}
	for i := range got {
		if !sameRecord(got[i], recs[i]) {
			t.Errorf("Scan record %d = %s, want %s", i, fmtRec(got[i]), fmtRec(recs[i]))
		}
	}
}

func (c *suite) scanManyPages(t *testing.T) {
	s := c.open(t)
	const n = 2600 // more than two of the backends' scan pages
	var want []string
	var batch []spool.Record
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%d.lab", i)
		if i%100 == 0 {
			id = fmt.Sprintf("%d[].lab", i)
			batch = append(batch, rec(fmt.Sprintf("%d[1].lab", i), time.Time{}))
		}
		batch = append(batch, rec(id, time.Time{}))
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	mustPut(t, s, batch...)
	for i := 1; i <= n; i++ {
		if i%100 == 0 {
			want = append(want, fmt.Sprintf("%d[].lab", i), fmt.Sprintf("%d[1].lab", i))
		} else {
			want = append(want, fmt.Sprintf("%d.lab", i))
		}
	}
	if got := ids(scanAll(t, s)); !slices.Equal(got, want) {
		t.Fatalf("Scan of %d records out of order or incomplete (got %d)", len(want), len(got))
	}
}

func (c *suite) scanStops(t *testing.T) {
	s := c.open(t)
	for i := 1; i <= 10; i++ {
		mustPut(t, s, rec(fmt.Sprintf("%d.lab", i), time.Time{}))
	}
	stop := errors.New("stop here")
	var seen []string
	err := s.Scan(ctx, func(r spool.Record) error {
		seen = append(seen, r.ID)
		if len(seen) == 3 {
			return fmt.Errorf("wrapped: %w", stop)
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Scan err = %v, want fn's error", err)
	}
	if !slices.Equal(seen, []string{"1.lab", "2.lab", "3.lab"}) {
		t.Fatalf("Scan visited %v after fn's error", seen)
	}
}

func (c *suite) scanCallbackWrites(t *testing.T) {
	s := c.open(t)
	const n = 3000
	var batch []spool.Record
	for i := 1; i <= n; i++ {
		batch = append(batch, rec(fmt.Sprintf("%d.lab", i), time.Time{}))
	}
	mustPut(t, s, batch...)
	var seen []string
	err := s.Scan(ctx, func(r spool.Record) error {
		seen = append(seen, r.ID)
		switch r.ID {
		case "5.lab":
			// Ahead of the scan: a new record is visited, a deleted one is not.
			if err := s.Put(ctx, rec("2500[].lab", t0)); err != nil {
				return err
			}
			if err := s.Delete(ctx, "2000.lab"); err != nil {
				return err
			}
			// Behind the scan: not visited again.
			return s.Put(ctx, rec("1[].lab", time.Time{}))
		case "6.lab":
			_, err := s.Get(ctx, "1.lab")
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Scan with writing callback: %v", err)
	}
	if !slices.Contains(seen, "2500[].lab") || slices.Contains(seen, "2000.lab") || slices.Contains(seen, "1[].lab") {
		t.Fatalf("Scan did not follow writes ahead of/behind it: 2500[] seen %v, 2000 seen %v, 1[] seen %v",
			slices.Contains(seen, "2500[].lab"), slices.Contains(seen, "2000.lab"), slices.Contains(seen, "1[].lab"))
	}
	if len(seen) != n {
		t.Fatalf("Scan visited %d records, want %d", len(seen), n)
	}
}

func (c *suite) purge(t *testing.T) {
	s := c.open(t)
	recs := []spool.Record{
		rec("1.lab", t0.Add(-2*time.Hour)),
		rec("2.lab", time.Time{}),
		rec("3[].lab", t0.Add(-time.Nanosecond)),
		rec("3[0].lab", t0.Add(-time.Hour)),
		rec("4.lab", t0), // exactly at the cut: kept
		rec("5.lab", t0.Add(time.Hour)),
		rec("6.lab", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)),
		rec("7.lab", t0.Add(-time.Hour)), // same time as 3[0]
	}
	mustPut(t, s, recs...)
	tests := []struct {
		name   string
		before time.Time
		n      int
		left   []string
	}{
		{"nothing older than the oldest", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), 0, []string{"1.lab", "2.lab", "3[].lab", "3[0].lab", "4.lab", "5.lab", "6.lab", "7.lab"}},
		{"before t0", t0, 5, []string{"2.lab", "4.lab", "5.lab"}},
		{"again is a no-op", t0, 0, []string{"2.lab", "4.lab", "5.lab"}},
		{"far future keeps active", t0.Add(1000 * time.Hour), 2, []string{"2.lab"}},
	}
	for _, tc := range tests {
		n, err := s.Purge(ctx, tc.before)
		if err != nil {
			t.Fatalf("%s: Purge: %v", tc.name, err)
		}
		if n != tc.n {
			t.Errorf("%s: Purge = %d, want %d", tc.name, n, tc.n)
		}
		if got := ids(scanAll(t, s)); !slices.Equal(got, tc.left) {
			t.Fatalf("%s: left %v, want %v", tc.name, got, tc.left)
		}
	}
}

func (c *suite) purgeFollowsOverwrite(t *testing.T) {
	s := c.open(t)
	mustPut(t, s, rec("1.lab", t0.Add(-time.Hour)), rec("2.lab", t0.Add(time.Hour)), rec("3.lab", t0.Add(-time.Hour)))
	// 1: finished -> active again (requeued): never purged.
	// 2: finish time moved before the cut: purged.
	// 3: finish time moved after the cut: kept.
	mustPut(t, s, rec("1.lab", time.Time{}), rec("2.lab", t0.Add(-2*time.Hour)), rec("3.lab", t0.Add(2*time.Hour)))
	n, err := s.Purge(ctx, t0)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1, nil", n, err)
	}
	if got := ids(scanAll(t, s)); !slices.Equal(got, []string{"1.lab", "3.lab"}) {
		t.Fatalf("left %v, want [1.lab 3.lab]", got)
	}
	n, err = s.Purge(ctx, t0.Add(3*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("second Purge = %d, %v; want 1, nil", n, err)
	}
	wantGet(t, s, rec("1.lab", time.Time{}))
}

func (c *suite) nextIDs(t *testing.T) {
	s := c.open(t)
	a, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a < 1 {
		t.Fatalf("first NextIDs = %d, want >= 1", a)
	}
	b, err := s.NextIDs(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b != a+1 || d != b+5 {
		t.Fatalf("NextIDs(1)=%d, NextIDs(5)=%d, NextIDs(1)=%d: want consecutive ranges", a, b, d)
	}
	for _, n := range []int{0, -1} {
		if _, err := s.NextIDs(ctx, n); err == nil {
			t.Errorf("NextIDs(%d) succeeded", n)
		}
	}
	e, err := s.NextIDs(ctx, 1)
	if err != nil || e != d+1 {
		t.Fatalf("NextIDs after invalid calls = %d, %v; want %d", e, err, d+1)
	}
}

func (c *suite) nextIDsAbovePut(t *testing.T) {
	s := c.open(t)
	a, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	big := a + 500
	mustPut(t, s, rec(fmt.Sprintf("%d[3].lab", big), time.Time{}))
	b, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b <= big {
		t.Fatalf("NextIDs = %d after Put of job %d: number would be reused", b, big)
	}
	// A Put below the counter does not move it back.
	mustPut(t, s, rec(fmt.Sprintf("%d.lab", a), time.Time{}))
	if d, err := s.NextIDs(ctx, 1); err != nil || d != b+1 {
		t.Fatalf("NextIDs = %d, %v; want %d", d, err, b+1)
	}
}

func (c *suite) contextCanceled(t *testing.T) {
	s := c.open(t)
	first, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, rec("1.lab", t0))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	checks := []struct {
		name string
		call func() error
	}{
		{"NextIDs", func() error { _, err := s.NextIDs(cctx, 1); return err }},
		{"Put", func() error { return s.Put(cctx, rec("2.lab", time.Time{})) }},
		{"Delete", func() error { return s.Delete(cctx, "1.lab") }},
		{"Get", func() error { _, err := s.Get(cctx, "1.lab"); return err }},
		{"Scan", func() error { return s.Scan(cctx, func(spool.Record) error { return nil }) }},
		{"Purge", func() error { _, err := s.Purge(cctx, t0.Add(time.Hour)); return err }},
	}
	for _, tc := range checks {
		if err := tc.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with canceled ctx: err = %v, want context.Canceled", tc.name, err)
		}
	}
	// Nothing happened.
	wantGet(t, s, rec("1.lab", t0))
	wantMissing(t, s, "2.lab")
	if n, err := s.NextIDs(ctx, 1); err != nil || n != first+1 {
		t.Fatalf("NextIDs after canceled calls = %d, %v; want %d", n, err, first+1)
	}
	// Canceled during a scan: the scan stops with ctx's error.
	for i := 3; i < 3000; i++ {
		mustPut(t, s, rec(fmt.Sprintf("%d.lab", i), time.Time{}))
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	seen := 0
	err = s.Scan(sctx, func(spool.Record) error {
		seen++
		if seen == 10 {
			scancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != 10 {
		t.Fatalf("Scan canceled in fn: err = %v after %d records; want context.Canceled after 10", err, seen)
	}
}

func (c *suite) concurrent(t *testing.T) {
	s := c.open(t)
	const workers, rounds, batch = 16, 20, 4
	var (
		mu   sync.Mutex
		all  []uint64
		errs = make(chan error, workers*2)
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				first, err := s.NextIDs(ctx, batch)
				if err != nil {
					errs <- err
					return
				}
				recs := make([]spool.Record, batch)
				for i := range recs {
					recs[i] = rec(fmt.Sprintf("%d.lab", first+uint64(i)), time.Time{})
					mu.Lock()
					all = append(all, first+uint64(i))
					mu.Unlock()
				}
				if err := s.Put(ctx, recs...); err != nil {
					errs <- err
					return
				}
				if _, err := s.Get(ctx, recs[0].ID); err != nil {
					errs <- err
					return
				}
				if r%5 == 0 {
					if err := s.Scan(ctx, func(spool.Record) error { return nil }); err != nil {
						errs <- err
						return
					}
					if _, err := s.Purge(ctx, t0); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent worker: %v", err)
	}
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("NextIDs handed out a number twice under concurrency")
	}
	got := scanAll(t, s)
	if len(got) != workers*rounds*batch {
		t.Fatalf("Scan saw %d records, want %d", len(got), workers*rounds*batch)
	}
	for i, r := range got {
		if want := fmt.Sprintf("%d.lab", all[i]); r.ID != want {
			t.Fatalf("record %d = %s, want %s", i, r.ID, want)
		}
	}
}

func (c *suite) closed(t *testing.T) {
	s := c.f.Open(t)
	mustPut(t, s, rec("1.lab", time.Time{}))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	checks := []struct {
		name string
		call func() error
	}{
		{"NextIDs", func() error { _, err := s.NextIDs(ctx, 1); return err }},
		{"Put", func() error { return s.Put(ctx, rec("2.lab", time.Time{})) }},
		{"Delete", func() error { return s.Delete(ctx, "1.lab") }},
		{"Get", func() error { _, err := s.Get(ctx, "1.lab"); return err }},
		{"Scan", func() error { return s.Scan(ctx, func(spool.Record) error { return nil }) }},
		{"Purge", func() error { _, err := s.Purge(ctx, t0); return err }},
	}
	for _, tc := range checks {
		if err := tc.call(); !errors.Is(err, spool.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", tc.name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func (c *suite) reopenKeepsRecords(t *testing.T) {
	s := c.open(t)
	recs := []spool.Record{
		rec("1.lab", time.Time{}), rec("2[].lab", time.Time{}), rec("2[0].lab", t0),
		rec("2[1].lab", time.Time{}), rec("3.lab", t0.Add(-time.Hour)), rec("4.lab", t0.Add(-2*time.Hour)),
	}
	mustPut(t, s, recs...)
	s = c.reopen(t, s)
	for _, r := range recs {
		wantGet(t, s, r)
	}
	// Writes after a reopen persist too, including Delete and Purge.
	if err := s.Delete(ctx, "1.lab"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx, t0.Add(-30*time.Minute)); err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2", n, err)
	}
	s = c.reopen(t, s)
	if got := ids(scanAll(t, s)); !slices.Equal(got, []string{"2[].lab", "2[0].lab", "2[1].lab"}) {
		t.Fatalf("after reopen: %v", got)
	}
	// The finished index survived: 2[0] is purgeable, the rest is not.
	if n, err := s.Purge(ctx, t0.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("Purge after reopen = %d, %v; want 1", n, err)
	}
}

// reopenAfterEachWrite reopens after every write of a sequence that
// overwrites, deletes what was just written, finishes and purges, and sets
// and clears state, and checks everything after each reopen.
func (c *suite) reopenAfterEachWrite(t *testing.T) {
	s := c.open(t)
	type want struct {
		recs  []spool.Record // in Scan order
		state string         // value of "drained"; "" when unset
	}
	steps := []struct {
		name string
		do   func(s spool.Spool) error
		want want
	}{
		{"put", func(s spool.Spool) error {
			return s.Put(ctx, rec("1.lab", time.Time{}), rec("2.lab", time.Time{}))
		}, want{recs: []spool.Record{rec("1.lab", time.Time{}), rec("2.lab", time.Time{})}}},
		{"delete the record just written", func(s spool.Spool) error { return s.Delete(ctx, "2.lab", "7.lab") },
			want{recs: []spool.Record{rec("1.lab", time.Time{})}}},
		{"finish", func(s spool.Spool) error { return s.Put(ctx, rec("1.lab", t0), rec("3.lab", time.Time{})) },
			want{recs: []spool.Record{rec("1.lab", t0), rec("3.lab", time.Time{})}}},
		{"state", func(s spool.Spool) error { return s.SetState(ctx, "drained", []byte("n1")) },
			want{recs: []spool.Record{rec("1.lab", t0), rec("3.lab", time.Time{})}, state: "n1"}},
		{"purge the record just finished", func(s spool.Spool) error {
			n, err := s.Purge(ctx, t0.Add(time.Second))
			if err == nil && n != 1 {
				err = fmt.Errorf("purged %d records, want 1", n)
			}
			return err
		}, want{recs: []spool.Record{rec("3.lab", time.Time{})}, state: "n1"}},
		{"re-add the purged id active", func(s spool.Spool) error { return s.Put(ctx, rec("1.lab", time.Time{})) },
			want{recs: []spool.Record{rec("1.lab", time.Time{}), rec("3.lab", time.Time{})}, state: "n1"}},
		{"clear state", func(s spool.Spool) error { return s.SetState(ctx, "drained", nil) },
			want{recs: []spool.Record{rec("1.lab", time.Time{}), rec("3.lab", time.Time{})}}},
	}
	for _, st := range steps {
		if err := st.do(s); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		s = c.reopen(t, s)
		got := scanAll(t, s)
		if len(got) != len(st.want.recs) {
			t.Fatalf("after %s and a reopen: Scan = %v, want %v", st.name, ids(got), ids(st.want.recs))
		}
		for i, r := range st.want.recs {
			if !sameRecord(got[i], r) {
				t.Fatalf("after %s and a reopen: record %d = %s, want %s", st.name, i, fmtRec(got[i]), fmtRec(r))
			}
			wantGet(t, s, r)
		}
		v, err := s.State(ctx, "drained")
		if err != nil || string(v) != st.want.state {
			t.Fatalf("after %s and a reopen: state %q, %v; want %q", st.name, v, err, st.want.state)
		}
	}
	if v, err := s.State(ctx, "drained"); err != nil || v != nil {
		t.Fatalf("cleared state reads %q, %v; want nil", v, err)
	}
}

func (c *suite) reopenNextIDs(t *testing.T) {
	s := c.open(t)
	var last uint64
	for round := 0; round < 5; round++ {
		for _, n := range []int{1, 3, 64} {
			first, err := s.NextIDs(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if first <= last {
				t.Fatalf("round %d: NextIDs(%d) = %d, not above %d handed out before", round, n, first, last)
			}
			last = first + uint64(n) - 1
		}
		if round == 2 {
			mustPut(t, s, rec(fmt.Sprintf("%d.lab", last+1000), time.Time{}))
			last += 1000
		}
		s = c.reopen(t, s)
	}
}

func (c *suite) state(t *testing.T) {
	s := c.open(t)
	ctx := context.Background()
	if v, err := s.State(ctx, "drained"); err != nil || v != nil {
		t.Fatalf("unset key: %q %v", v, err)
	}
	val := []byte(`["n1","n2"]`)
	if err := s.SetState(ctx, "drained", val); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X' // the spool keeps its own copy
	if v, err := s.State(ctx, "drained"); err != nil || string(v) != `["n1","n2"]` {
		t.Fatalf("state %q %v", v, err)
	}
	if err := s.SetState(ctx, "drained", nil); err != nil {
		t.Fatal(err)
	}
	if v, err := s.State(ctx, "drained"); err != nil || v != nil {
		t.Fatalf("deleted key: %q %v", v, err)
	}
	if err := s.Put(ctx, spool.Record{ID: "1.t", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Scan(ctx, func(spool.Record) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("state shows in Scan: %d records, %v", n, err)
	}
}

func (c *suite) reopenState(t *testing.T) {
	s := c.open(t)
	ctx := context.Background()
	if err := s.SetState(ctx, "drained", []byte("n3")); err != nil {
		t.Fatal(err)
	}
	s = c.reopen(t, s)
	if v, err := s.State(ctx, "drained"); err != nil || string(v) != "n3" {
		t.Fatalf("after reopen: %q %v", v, err)
	}
}

// usageValue is a state value as large as a spool value may be, of every
// byte value: the controller's fair share usage record is the largest
// state it keeps.
func usageValue(seed byte) []byte {
	v := make([]byte, spool.MaxRecordSize)
	for i := range v {
		v[i] = byte(i*7) + seed
	}
	return v
}

// stateUsage: a state value of MaxRecordSize bytes is kept whole and
// replaced whole, next to another key; one above it fails with ErrTooLarge
// and keeps the old value.
func (c *suite) stateUsage(t *testing.T) {
	s := c.open(t)
	ctx := context.Background()
	if err := s.SetState(ctx, "drained-nodes", []byte(`["n1"]`)); err != nil {
		t.Fatal(err)
	}
	for _, seed := range []byte{1, 2} {
		if err := s.SetState(ctx, "fair-usage", usageValue(seed)); err != nil {
			t.Fatalf("SetState of %d bytes: %v", spool.MaxRecordSize, err)
		}
		if v, err := s.State(ctx, "fair-usage"); err != nil || !bytes.Equal(v, usageValue(seed)) {
			t.Fatalf("State after the write with seed %d: %d bytes, %v", seed, len(v), err)
		}
	}
	err := s.SetState(ctx, "fair-usage", make([]byte, spool.MaxRecordSize+1))
	if !errors.Is(err, spool.ErrTooLarge) {
		t.Fatalf("SetState above MaxRecordSize: %v, want ErrTooLarge", err)
	}
	if v, err := s.State(ctx, "fair-usage"); err != nil || !bytes.Equal(v, usageValue(2)) {
		t.Fatalf("the value after a refused write: %d bytes, %v", len(v), err)
	}
	if v, err := s.State(ctx, "drained-nodes"); err != nil || string(v) != `["n1"]` {
		t.Fatalf("the other key: %q %v", v, err)
	}
}

// reopenUsageState: the large value outlives a reopen.
func (c *suite) reopenUsageState(t *testing.T) {
	s := c.open(t)
	ctx := context.Background()
	if err := s.SetState(ctx, "fair-usage", usageValue(3)); err != nil {
		t.Fatal(err)
	}
	s = c.reopen(t, s)
	if v, err := s.State(ctx, "fair-usage"); err != nil || !bytes.Equal(v, usageValue(3)) {
		t.Fatalf("after reopen: %d bytes, %v", len(v), err)
	}
}
