package spool_test

import (
	"testing"

	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/spooltest"
)

func TestBoltConformance(t *testing.T) {
	spooltest.Run(t, spooltest.Factory{
		Open: func(t *testing.T) spool.Spool {
			s, err := spool.Open(t.TempDir(), spool.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Reopen: func(t *testing.T, old spool.Spool) spool.Spool {
			dir := old.(*spool.Bolt).Dir()
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := spool.Open(dir, spool.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}

func TestMemoryConformance(t *testing.T) {
	spooltest.Run(t, spooltest.Factory{
		Open: func(*testing.T) spool.Spool { return spool.NewMemory() },
	})
}
