package spool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchData is about the size of a job's JSON.
var benchData = bytes.Repeat([]byte(`{"k":"v","n":1234567},`), 1024/22)

func benchOpen(b *testing.B, noSync bool) *Bolt {
	b.Helper()
	s, err := Open(b.TempDir(), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkPut measures synced group commits of new ~1 KiB records, the
// controller's submission path (one op = one Put of batch records).
func BenchmarkPut(b *testing.B) {
	for _, batch := range []int{1, 8, 16, 32, 64, 128, 512} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := benchOpen(b, false)
			ctx := context.Background()
			recs := make([]Record, batch)
			num := uint64(1)
			b.SetBytes(int64(batch * len(benchData)))
			b.ResetTimer()
			for b.Loop() {
				for i := range recs {
					recs[i] = Record{ID: fmt.Sprintf("%d.lab", num), Data: benchData}
					num++
				}
				if err := s.Put(ctx, recs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkScan measures one Scan over 100,000 ~1 KiB records.
func BenchmarkScan(b *testing.B) {
	const n = 100_000
	s := benchOpen(b, true)
	ctx := context.Background()
	recs := make([]Record, 0, 1000)
	fin := time.Unix(1e9, 0)
	for num := 1; num <= n; num++ {
		r := Record{ID: fmt.Sprintf("%d.lab", num), Data: benchData}
		if num%2 == 0 {
			r.Finished = fin
		}
		recs = append(recs, r)
		if len(recs) == cap(recs) {
			if err := s.Put(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	b.ResetTimer()
	for b.Loop() {
		seen := 0
		if err := s.Scan(ctx, func(Record) error { seen++; return nil }); err != nil {
			b.Fatal(err)
		}
		if seen != n {
			b.Fatalf("scanned %d records, want %d", seen, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkNextIDs measures one synced reservation.
func BenchmarkNextIDs(b *testing.B) {
	s := benchOpen(b, false)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.NextIDs(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryPut is Memory's cost per Put of 64 records, for sharq-sim.
func BenchmarkMemoryPut(b *testing.B) {
	s := NewMemory()
	ctx := context.Background()
	recs := make([]Record, 64)
	num := uint64(1)
	for b.Loop() {
		for i := range recs {
			recs[i] = Record{ID: fmt.Sprintf("%d.lab", num), Data: benchData}
			num++
		}
		if err := s.Put(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*64)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkLogSync is the file system's side of the log's design: a 600
// byte write and fdatasync at the end of a file that grows with each write
// (the size change is journaled with the data) against the same write into
// blocks filled with zeros ahead of time (data only), as walFile does.
func BenchmarkLogSync(b *testing.B) {
	rec := bytes.Repeat([]byte{'x'}, 600)
	for _, prealloc := range []bool{false, true} {
		name := "growing"
		if prealloc {
			name = "preallocated"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if prealloc {
				if _, err := f.Write(make([]byte, (b.N+1)*len(rec))); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			var off int64
			for range b.N {
				if _, err := f.WriteAt(rec, off); err != nil {
					b.Fatal(err)
				}
				if err := fdatasync(f); err != nil {
					b.Fatal(err)
				}
				off += int64(len(rec))
			}
		})
	}
}

// BenchmarkCheckpoint measures one checkpoint of an overlay of n ~1 KiB
// new records into jobs.db: the pause that the write which triggers it
// sees (once per defaultLimits.entries records logged).
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{1024, 2048, 8192} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s := benchOpen(b, false)
			s.lim.entries = 1 << 30 // the benchmark checkpoints by hand
			ctx := context.Background()
			num := uint64(1)
			recs := make([]Record, 128)
			for b.Loop() {
				b.StopTimer()
				for range n / len(recs) {
					for i := range recs {
						recs[i] = Record{ID: fmt.Sprintf("%d.lab", num), Data: benchData}
						num++
					}
					if err := s.Put(ctx, recs...); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				s.wmu.Lock()
				err := s.checkpoint()
				s.wmu.Unlock()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/record")
		})
	}
}
