package etcdspool_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
	"github.com/sharq-hpc/sharq/spool/spooltest"
)

var prefixes atomic.Int64

func TestEtcdConformance(t *testing.T) {
	m := etcdtest.Start(t)
	cli := etcdtest.Client(t, m.ClientURL)
	open := func(t *testing.T, prefix string) spool.Spool {
		s, err := etcdspool.Open(context.Background(), cli, etcdspool.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	spooltest.Run(t, spooltest.Factory{
		Open: func(t *testing.T) spool.Spool {
			return open(t, fmt.Sprintf("/sharq/test%d/", prefixes.Add(1)))
		},
		Reopen: func(t *testing.T, old spool.Spool) spool.Spool {
			prefix := old.(*etcdspool.Etcd).Prefix()
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, prefix)
		},
	})
}

func TestRefusedWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("NOSPACE alarm", func(t *testing.T) {
		m := etcdtest.StartQuota(t, 4<<20)
		cli := etcdtest.Client(t, m.ClientURL)
		s, err := etcdspool.Open(ctx, cli, etcdspool.Options{Prefix: "/sharq/q/"})
		if err != nil {
			t.Fatal(err)
		}
		big := bytes.Repeat([]byte("x"), 256<<10)
		var failed string
		for i := 1; i <= 200 && failed == ""; i++ {
			id := fmt.Sprintf("%d.lab", i)
			if err = s.Put(ctx, spool.Record{ID: id, Data: big}); err != nil {
				failed = id
			}
		}
		if failed == "" {
			t.Fatal("a 4 MiB quota took 50 MiB of records")
		}
		if !errors.Is(err, spool.ErrUnavailable) || !strings.Contains(err.Error(), "NOSPACE") {
			t.Fatalf("Put over quota: err = %v, want ErrUnavailable naming NOSPACE", err)
		}
		// The write that crossed the quota may be applied (etcd applies it and
		// answers NOSPACE), but it was not acknowledged; once the alarm is up,
		// nothing more is written.
		err = s.Put(ctx, spool.Record{ID: "1000.lab", Data: []byte("small")})
		if !errors.Is(err, spool.ErrUnavailable) || !strings.Contains(err.Error(), "NOSPACE") {
			t.Fatalf("Put under the NOSPACE alarm: err = %v, want ErrUnavailable naming NOSPACE", err)
		}
		if _, err := s.Get(ctx, "1000.lab"); !errors.Is(err, spool.ErrNotFound) {
			t.Fatalf("a record refused under the alarm: Get err = %v, want ErrNotFound", err)
		}
		t.Logf("quota reached at %s", failed)
		if _, err := s.NextIDs(ctx, 1); !errors.Is(err, spool.ErrUnavailable) {
			t.Fatalf("NextIDs over quota: err = %v, want ErrUnavailable", err)
		}
	})
	t.Run("member gone", func(t *testing.T) {
		m := etcdtest.Start(t)
		cli := etcdtest.Client(t, m.ClientURL)
		s, err := etcdspool.Open(ctx, cli, etcdspool.Options{Prefix: "/sharq/q/", Timeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		m.Stop()
		err = s.Put(ctx, spool.Record{ID: "1.lab", Data: []byte("x")})
		if !errors.Is(err, spool.ErrUnavailable) {
			t.Fatalf("Put without etcd: err = %v, want ErrUnavailable", err)
		}
		if _, err := s.NextIDs(ctx, 1); !errors.Is(err, spool.ErrUnavailable) {
			t.Fatalf("NextIDs without etcd: err = %v, want ErrUnavailable", err)
		}
	})
}

// TestChunksUnderSmallLimits runs a group commit against a member whose
// transactions take few operations: Put must split it and still store
// every record.
func TestChunksUnderSmallLimits(t *testing.T) {
	m := etcdtest.Start(t)
	cli := etcdtest.Client(t, m.ClientURL)
	ctx := context.Background()
	s, err := etcdspool.Open(ctx, cli, etcdspool.Options{Prefix: "/sharq/c/", MaxTxnOps: 9})
	if err != nil {
		t.Fatal(err)
	}
	var recs []spool.Record
	for i := 1; i <= 101; i++ {
		recs = append(recs, spool.Record{ID: fmt.Sprintf("%d.lab", i), Data: []byte{byte(i)}})
	}
	if err := s.Put(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Scan(ctx, func(r spool.Record) error {
		n++
		if r.Data[0] != byte(n) {
			return fmt.Errorf("record %s holds %d", r.ID, r.Data[0])
		}
		return nil
	}); err != nil || n != len(recs) {
		t.Fatalf("Scan: %d records, %v; want %d", n, err, len(recs))
	}
	if first, err := s.NextIDs(ctx, 1); err != nil || first != 102 {
		t.Fatalf("NextIDs after the chunked Put = %d, %v; want 102", first, err)
	}
}
