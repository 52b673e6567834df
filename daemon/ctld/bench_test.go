package ctld

import (
	"context"
	"fmt"
	"testing"

	"sharq/api"
)

// benchCluster fills an in-process controller with n pending jobs.
func benchCluster(b *testing.B, n int) *testCluster {
	t := &testing.T{}
	_ = t
	tc := newTestCluster(&testing.T{}, []string{"n1:8"}, twoShares)
	b.Cleanup(tc.stop)
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	spec := &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 8}}}
	const batch = 5000
	for done := 0; done < n; done += batch {
		err := tc.ctl.do(context.Background(), func() {
			for i := 0; i < batch && done+i < n; i++ {
				if _, e := tc.ctl.submit(id, spec); e != nil {
					panic(e)
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return tc
}

// BenchmarkStat measures the controller's side of qstat (selection, sort,
// summary lines) over 100,000 jobs.
func BenchmarkStat(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tc := benchCluster(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var resp api.Response
				tc.ctl.do(context.Background(), func() { tc.ctl.stat(Identity{UID: 0, User: "root"}, &api.StatFilter{Summary: true}, &resp) })
				if len(resp.Summary) == 0 {
					b.Fatal("empty")
				}
			}
		})
	}
}
