//go:build !unit

package ctld

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestQstatFullDuringHistoryTrim reads qstat -f answers while the loop
// keeps trimming the job's history past its limit: answers being written
// must not share the record's history array (run with -race).
func TestQstatFullDuringHistoryTrim(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u"}})
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

// TestReloadWithNodesAttached reloads the configuration, node_timeout
// changing each time, while attached nodes send heartbeats: their
// connections' goroutines must not read the configuration the loop
// replaces (run with -race).
func TestReloadWithNodesAttached(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:4", "n2:4"}, twoShares)
	nodes := []*scriptedNode{tc.attachNode("n1"), tc.attachNode("n2")}
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := api.Encode(n.conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Time: time.Now()}); err != nil {
					t.Errorf("heartbeat: %v", err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	for i := range 20 {
		timeout := []string{"20m0s", "30m0s"}[i%2]
		next := strings.Replace(string(text), fmt.Sprintf("node_timeout = %q", testNodeTimeout), `node_timeout = "`+timeout+`"`, 1)
		if err := os.WriteFile(tc.conf, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatalf("reload %d: %v", i, resp.Error)
		}
		if got := tc.ctl.nodeTimeout(); got.String() != timeout {
			t.Errorf("reload %d: node timeout %v, want %s", i, got, timeout)
		}
	}
	close(stop)
	wg.Wait()
}
