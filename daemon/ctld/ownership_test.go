package ctld

import (
	"sync"
	"testing"

	"sharq/api"
)

// TestQstatFullDuringHistoryTrim reads qstat -f answers while the loop
// keeps trimming the job's history past its limit: answers being written
// must not share the record's history array (run with -race).
func TestQstatFullDuringHistoryTrim(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	id := tc.submitSpec(&api.SubmitSpec{Job: api.Job{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u"}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true}})
			if resp.Error != nil || len(resp.Jobs) != 1 || len(resp.Jobs[0].History) == 0 {
				t.Errorf("qstat -f: %+v", resp)
				return
			}
		}
	}()
	// Each release and hold is a history entry: 2*150 go past the limit
	// (200) and trim it on every change.
	for range 150 {
		for _, op := range []api.Op{api.OpRelease, api.OpHold} {
			if resp := tc.call(api.Request{Op: op, IDs: []string{id}}); resp.Error != nil {
				t.Fatalf("%s: %v", op, resp.Error)
			}
		}
	}
	close(stop)
	wg.Wait()
	h := tc.job(id).History
	if len(h) != 200 || h[0].What != "submitted to a" {
		t.Fatalf("history has %d entries, the first %+v; want 200 from the submission", len(h), h[0])
	}
}
