package ctld

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// Property: whatever the submissions and their times, the controller
// remembers at most maxRequestIDs ids, none older than requestIDMemory,
// and every id within both bounds.
func TestRequestIDsBounded(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			r := newRequestIDs()
			now := time.Unix(1_700_000_000, 0)
			type added struct {
				key requestKey
				at  time.Time
			}
			var all []added
			n := maxRequestIDs + rng.IntN(maxRequestIDs/2)
			for i := range n {
				// Bursts and pauses; now and then an id again (a retry).
				if rng.IntN(50_000) == 0 {
					now = now.Add(time.Duration(rng.Int64N(int64(2 * requestIDMemory))))
				} else {
					now = now.Add(time.Duration(rng.IntN(3000)) * time.Microsecond)
				}
				k := requestKey{uid: uint32(rng.IntN(50)), id: strconv.Itoa(i)}
				if len(all) > 0 && rng.IntN(20) == 0 {
					k = all[rng.IntN(len(all))].key
				}
				r.add(k, "j"+strconv.Itoa(i), now, now)
				all = append(all, added{k, now})
				if r.len() > maxRequestIDs {
					t.Fatalf("after %d submissions %d ids remembered", i+1, r.len())
				}
			}
			if len(r.order) > 2*maxRequestIDs {
				t.Fatalf("order holds %d entries", len(r.order))
			}
			// The newest ids within the age bound are all remembered.
			latest := map[requestKey]time.Time{}
			for _, a := range all {
				latest[a.key] = a.at
			}
			kept := 0
			for i := len(all) - 1; i >= 0 && kept < maxRequestIDs/2; i-- {
				a := all[i]
				if now.Sub(a.at) >= requestIDMemory || latest[a.key] != a.at {
					continue
				}
				kept++
				if _, ok := r.lookup(a.key); !ok {
					t.Fatalf("id %v of %v (now %v) forgotten", a.key, a.at, now)
				}
			}
			for k := range r.jobs {
				if now.Sub(latest[k]) >= requestIDMemory {
					t.Fatalf("id %v of %v kept at %v", k, latest[k], now)
				}
			}
			r.prune(now.Add(requestIDMemory))
			if r.len() != 0 {
				t.Fatalf("%d ids left a memory's length later", r.len())
			}
		})
	}
}

// FuzzRequestID: a request id from the wire is accepted only when it is
// at most api.MaxRequestID letters, digits, '-' and '_', and an accepted
// one comes back from the job's spool record as it went in.
func FuzzRequestID(f *testing.F) {
	f.Add("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	f.Add("")
	f.Add(strings.Repeat("z", api.MaxRequestID+1))
	f.Add("a\x00b")
	f.Add("é")
	f.Add(`"},"job":{"id":"1.t"`)
	f.Fuzz(func(t *testing.T, s string) {
		err := checkRequestID(s)
		valid := len(s) <= api.MaxRequestID
		for _, c := range []byte(s) {
			valid = valid && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
		}
		if (err == nil) != valid {
			t.Fatalf("checkRequestID(%q) = %v", s, err)
		}
		if err != nil {
			return
		}
		j := &api.Job{ID: "1.t", Name: "x"}
		b, err := encodeRequestRecord(j, s)
		if err != nil {
			t.Fatal(err)
		}
		got, req, err := decodeRequestRecord("1.t", b)
		if err != nil || req != s || got.ID != "1.t" || got.Name != "x" {
			t.Fatalf("record of request %q: %+v %q %v", s, got, req, err)
		}
	})
}
