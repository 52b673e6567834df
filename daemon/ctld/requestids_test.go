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

// A submission sent again with the same request id (its answer was lost)
// gets the job the first made, also from a controller restarted on the
// same spool (the id is spooled with the job); another user's same id, or
// no id, makes a new job; a malformed id is refused. Over the real TCP
// client port with MUNGE credentials, each try with its own credential as
// the client package sends them.
func TestSubmitRequestID(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares,
		"client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	submit := func(uid uint32, request string) *api.Response {
		t.Helper()
		req := line(t, api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{RequestID: request, Job: api.JobSpec{
			Name: "r", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}}})
		cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, uid, api.RequestPayload(req), 300)})
		return remoteCall(t, addr, cred, req)
	}
	ok := func(r *api.Response) string {
		t.Helper()
		if r.Error != nil || r.JobID == "" {
			t.Fatalf("submit: %+v", r.Error)
		}
		return r.JobID
	}
	first := ok(submit(remoteUID, "4f1c0a"))
	if again := ok(submit(remoteUID, "4f1c0a")); again != first {
		t.Fatalf("the repeated request made job %s; the first made %s", again, first)
	}
	other := ok(submit(remoteUID+1, "4f1c0a"))
	plain1, plain2 := ok(submit(remoteUID, "")), ok(submit(remoteUID, ""))
	if other == first || plain1 == plain2 || plain1 == first {
		t.Fatalf("jobs %s (another user, same id), %s and %s (no id), %s (first)", other, plain1, plain2, first)
	}
	for _, bad := range []string{strings.Repeat("a", api.MaxRequestID+1), "a b", "é", "x\n"} {
		if r := submit(remoteUID, bad); r.Error == nil || r.Error.Code != api.CodeBadRequest || !strings.Contains(r.Error.Message, "request id") {
			t.Errorf("request id %q: %+v", bad, r.Error)
		}
	}
	tc.restart()
	if again := ok(submit(remoteUID, "4f1c0a")); again != first {
		t.Fatalf("after a restart the repeated request made job %s; the first made %s", again, first)
	}
	if r := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}); len(r.Jobs) != 4 {
		t.Fatalf("%d jobs, want 4", len(r.Jobs))
	}
}

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
