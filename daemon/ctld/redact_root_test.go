//go:build !unit

package ctld

import (
	"os"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestNodeReaddedByReconfigureComesBack: a node that a reload removes and
// a later reload adds again comes back up (it once stayed down forever
// while it heartbeated).
func TestNodeReaddedByReconfigureComesBack(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	n1 := tc.attachNode("n1")
	tc.attachNode("n2")
	reload := func(nodes ...string) {
		t.Helper()
		if err := os.WriteFile(tc.conf, []byte(clusterTOML(tc.dir, tc.listen, nodes, twoShares)), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatalf("reconfigure: %v", resp.Error)
		}
	}
	reload("n2:8")
	reload("n1:8", "n2:8")
	select { // asked to say hello again
	case _, ok := <-n1.msgs:
		for ok {
			_, ok = <-n1.msgs
		}
	case <-time.After(testWait):
		t.Fatal("n1's connection stayed open")
	}
	n1 = tc.attachNode("n1")
	for _, st := range tc.call(api.Request{Op: api.OpNodes}).Nodes {
		if st.State != "up" {
			t.Fatalf("node %s is %s after the reloads", st.Name, st.State)
		}
	}
	_ = n1
}
