package spool_test

import (
	"testing"

	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/spooltest"
)

func TestBoltConformance(t *testing.T) {
	tests := []struct {
		name string
		opts spool.Options
		// crash: Reopen abandons the spool (no checkpoint, as after kill
		// -9), so that the reopened one replays its log.
		crash bool
	}{
		// Writes stay in the log and overlay until Close.
		{"Logged", spool.Options{}, false},
		{"LoggedReplayed", spool.Options{}, true},
		// A checkpoint after every 16 records (reads come from both) and
		// a log of 64 KiB that starts over often, leaving old frames
		// behind.
		{"CheckpointOften", spool.OptionsCheckpointAfter(16, 64<<10), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spooltest.Run(t, spooltest.Factory{
				Open: func(t *testing.T) spool.Spool {
					s, err := spool.Open(t.TempDir(), tc.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Reopen: func(t *testing.T, old spool.Spool) spool.Spool {
					b := old.(*spool.Bolt)
					close := b.Close
					if tc.crash {
						close = b.Abandon
					}
					if err := close(); err != nil {
						t.Fatal(err)
					}
					s, err := spool.Open(b.Dir(), tc.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
			})
		})
	}
}

func TestMemoryConformance(t *testing.T) {
	spooltest.Run(t, spooltest.Factory{
		Open: func(*testing.T) spool.Spool { return spool.NewMemory() },
	})
}
