package etcdspool_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// BenchmarkScan reads 100,000 records of 1 KiB (a new leader's restore).
func BenchmarkScan(b *testing.B) {
	m := etcdtest.Start(b)
	cli := etcdtest.Client(b, m.ClientURL)
	ctx := context.Background()
	s, err := etcdspool.Open(ctx, cli, etcdspool.Options{Prefix: "/sharq/bench/"})
	if err != nil {
		b.Fatal(err)
	}
	const n = 100000
	data := bytes.Repeat([]byte("x"), 1024)
	var recs []spool.Record
	for i := 1; i <= n; i++ {
		recs = append(recs, spool.Record{ID: fmt.Sprintf("%d.lab", i), Data: data})
		if len(recs) == 5000 {
			if err := s.Put(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := 0
		if err := s.Scan(ctx, func(spool.Record) error { got++; return nil }); err != nil || got != n {
			b.Fatalf("Scan: %d records, %v", got, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
