//go:build !unit

package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/internal/pgtest"
)

// historyBackends are the stores the history tests run on.
var historyBackends = []string{"sqlite", "postgres"}

// accountingTOML is an [accounting] section of settings (TOML lines) on
// backend: for "postgres", a database in a private PostgreSQL that stops
// when t ends.
func accountingTOML(t *testing.T, backend, settings string) string {
	t.Helper()
	section := "\n[accounting]\n" + settings
	if backend != "postgres" {
		return section
	}
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop() })
	dsn, err := pg.CreateDB(context.Background(), "sharq")
	if err != nil {
		t.Fatal(err)
	}
	return section + fmt.Sprintf("backend = \"postgres\"\ndsn = %q\n", dsn)
}

// qstat -x without ids lists the history's jobs too, merged with the
// spool's without duplicates, bounded by --since, each user's own only.
func TestQstatListsHistory(t *testing.T) {
	for _, backend := range historyBackends {
		t.Run(backend, func(t *testing.T) {
			extra := accountingTOML(t, backend, "")
			tc := newTestCluster(t, []string{"n1:8"}, twoShares+extra)
			n := tc.attachNode("n1")
			aliceOld := tc.runJob(n, alice, "a", 2, 0)
			bobOld := tc.runJob(n, bob, "b", 2, 3)
			tc.waitRecorded(aliceOld)
			tc.waitRecorded(bobOld)

			// In the spool and in the history: listed once.
			out, _ := tc.qstatAs(nil, "-x")
			if rows(out, aliceOld) != 1 || rows(out, bobOld) != 1 {
				t.Fatalf("qstat -x with the jobs in both the spool and the history:\n%s", out)
			}

			// The jobs leave the spool: its purge, as it runs a week after
			// they ended. A new job waits in the spool.
			if err := tc.ctl.do(context.Background(), func() {
				tc.ctl.purge(time.Now().Add(tc.ctl.cfg.Cluster.History + time.Minute))
			}); err != nil {
				t.Fatal(err)
			}
			aliceNew := tc.submitHoldAs(alice, "a", 1, "u") // held: it waits
			cases := []struct {
				name  string
				who   *Identity
				args  []string
				shown map[string]int // id: rows
			}{
				{"admin sees all", nil, []string{"-x"}, map[string]int{aliceOld: 1, bobOld: 1, aliceNew: 1}},
				{"user sees own history", &alice, []string{"-x"}, map[string]int{aliceOld: 1, bobOld: 0, aliceNew: 1}},
				{"other user", &bob, []string{"-x"}, map[string]int{aliceOld: 0, bobOld: 1, aliceNew: 1}},
				{"-u another user's history", &alice, []string{"-x", "-u", "bob"}, map[string]int{aliceOld: 0, bobOld: 0, aliceNew: 0}},
				{"-u admin", nil, []string{"-x", "-u", "bob"}, map[string]int{aliceOld: 0, bobOld: 1, aliceNew: 0}},
				{"without -x", nil, nil, map[string]int{aliceOld: 0, bobOld: 0, aliceNew: 1}},
				{"--since before", nil, []string{"-x", "--since", "1d"}, map[string]int{aliceOld: 1, bobOld: 1, aliceNew: 1}},
				{"--since after", nil, []string{"-x", "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
					map[string]int{aliceOld: 0, bobOld: 0, aliceNew: 1}},
			}
			for _, c := range cases {
				out, code := tc.qstatAs(c.who, c.args...)
				if code != 0 {
					t.Fatalf("%s: exit %d", c.name, code)
				}
				for id, want := range c.shown {
					if got := rows(out, id); got != want {
						t.Errorf("%s: %s in %d rows, want %d:\n%s", c.name, id, got, want, out)
					}
				}
			}
			// -x -f: the full record from the history.
			out, _ = tc.qstatAs(&bob, "-x", "-f", "-F", "json")
			var doc struct{ Jobs map[string]map[string]any }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("qstat -x -f -F json: %v\n%s", err, out)
			}
			j, ok := doc.Jobs[bobOld]
			if owner, _ := j["Job_Owner"].(string); !ok || j["job_state"] != "F" || j["Exit_status"] != float64(3) || !strings.HasPrefix(owner, "bob") {
				t.Fatalf("bob's job from the history: %+v (%v)", j, ok)
			}
			if _, ok := doc.Jobs[aliceOld]; ok {
				t.Fatalf("bob sees alice's history: %s", out)
			}
			if _, code := tc.qstatAs(nil, "--since", "1d"); code != cli.ExitUsage {
				t.Fatalf("--since without -x: exit %d", code)
			}
			if _, code := tc.qstatAs(nil, "-x", "--since", "soon"); code != cli.ExitUsage {
				t.Fatalf("--since soon: exit %d", code)
			}
		})
	}
}
