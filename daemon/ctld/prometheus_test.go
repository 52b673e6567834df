//go:build !unit

package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// The Grafana dashboard and the Prometheus alert rules in contrib, tested
// against Debian's prometheus scraping this controller.
const (
	dashboardFile = "../../contrib/grafana/sharq.json"
	rulesFile     = "../../contrib/prometheus/sharq-alerts.yml"
)

func TestPromtoolChecksRules(t *testing.T) {
	out, err := exec.Command("promtool", "check", "rules", rulesFile).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := exec.Command("promtool", "check", "config", "../../contrib/prometheus/prometheus.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// dashboardExprs lists every query of the dashboard, its template
// variables replaced by "match all".
func dashboardExprs(t *testing.T) []string {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, strings.ReplaceAll(tg.Expr, "$share", ".*"))
		}
	}
	return out
}

// ruleSelectors lists each alert rule's series: a rule's expression is
// empty while all is well, so the test asks for what it reads instead.
func ruleSelectors(t *testing.T) map[string][]string {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	name := ""
	sel := regexp.MustCompile(`\b(sharq_[a-z_]+|up)(\{[^}]*\})?`)
	inExpr := false
	for _, line := range strings.Split(string(b), "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "- alert:"):
			name, inExpr = strings.TrimSpace(strings.TrimPrefix(trim, "- alert:")), false
		case strings.HasPrefix(trim, "expr:"):
			inExpr = true
			trim = strings.TrimPrefix(trim, "expr:")
		case strings.HasSuffix(trim, ":") || strings.HasPrefix(trim, "for:") || strings.HasPrefix(trim, "labels:"):
			inExpr = false
		}
		if inExpr && name != "" {
			for _, m := range sel.FindAllString(trim, -1) {
				if strings.Contains(m, `reason!~`) {
					m = strings.SplitN(m, "{", 2)[0] // the filter may match nothing right now
				}
				out[name] = append(out[name], m)
			}
		}
	}
	if len(out) < 6 {
		t.Fatalf("found %d rules in %s", len(out), rulesFile)
	}
	return out
}

type promClient struct{ base string }

func (p promClient) get(path string, v any) error {
	resp, err := http.Get(p.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// query runs an instant query and says how many series it returned.
func (p promClient) query(expr string) (int, error) {
	var r struct {
		Status string
		Error  string
		Data   struct{ Result []json.RawMessage }
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(expr), &r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", expr, r.Error)
	}
	return len(r.Data.Result), nil
}

func (p promClient) alertState(name string) string {
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if err := p.get("/api/v1/alerts", &r); err != nil {
		return ""
	}
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == name {
			return a.State
		}
	}
	return ""
}

func eventually(t *testing.T, what string, d time.Duration, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		done, why := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestPrometheusDashboardAndAlerts(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("Debian's prometheus is needed (contrib/local/install-deps.sh --test):", err)
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs, selectors := dashboardExprs(t), ruleSelectors(t)

	metricsAddr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares, fmt.Sprintf("metrics = %q", metricsAddr))
	n := tc.attachNode("n1")
	// A borrower preempted by the owner, a job that ran, one pending.
	borrower := tc.submit("b", 8, nil)
	n.expect(api.MsgStart)
	owner := tc.submit("a", 4, nil)
	n.expect(api.MsgStop)
	n.report(borrower, 0, "exited", 143)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart)
	n.report(owner, 0, "exited", 0)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart) // the borrower again
	tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "held", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Hold: "u", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}})
	// The node stays up (heartbeats) until the node-down case closes it.
	beat := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		for {
			select {
			case <-beat:
				return
			case <-time.After(500 * time.Millisecond):
				api.Encode(n.conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Node: "n1"})
			}
		}
	}()
	defer func() {
		select {
		case <-beat:
		default:
			close(beat)
		}
		<-beating
	}()

	dir := t.TempDir()
	webAddr := freeAddr(t)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: sharqctld
    static_configs:
      - targets: [%q]
`, rules, metricsAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+webAddr)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	}()
	p := promClient{base: "http://" + webAddr}

	t.Run("dashboard queries return data", func(t *testing.T) {
		for _, e := range exprs {
			eventually(t, e, 30*time.Second, func() (bool, string) {
				n, err := p.query(e)
				return err == nil && n > 0, fmt.Sprintf("%d series, %v", n, err)
			})
		}
	})
	t.Run("rules are healthy and read existing series", func(t *testing.T) {
		for rule, sels := range selectors {
			for _, s := range sels {
				eventually(t, rule+": "+s, 15*time.Second, func() (bool, string) {
					n, err := p.query(s)
					return err == nil && n > 0, fmt.Sprintf("%d series, %v", n, err)
				})
			}
		}
		var r struct {
			Data struct {
				Groups []struct {
					Rules []struct {
						Name, Health, LastError string
					}
				}
			}
		}
		eventually(t, "rule evaluation", 15*time.Second, func() (bool, string) {
			if err := p.get("/api/v1/rules", &r); err != nil {
				return false, err.Error()
			}
			count := 0
			for _, g := range r.Data.Groups {
				for _, rule := range g.Rules {
					if rule.Health != "ok" {
						return false, fmt.Sprintf("rule %s: health %q %s", rule.Name, rule.Health, rule.LastError)
					}
					count++
				}
			}
			return count == len(selectors), fmt.Sprintf("%d rules evaluated, want %d", count, len(selectors))
		})
	})
	t.Run("node down fires", func(t *testing.T) {
		if s := p.alertState("SharqNodeDown"); s != "" {
			t.Fatalf("SharqNodeDown is %s while the node is up", s)
		}
		close(beat)
		<-beating
		n.conn.Close() // the node goes silent, and node_timeout passes
		tc.advance(testNodeTimeout + time.Second)
		eventually(t, "SharqNodeDown", 30*time.Second, func() (bool, string) {
			s := p.alertState("SharqNodeDown")
			return s == "pending" || s == "firing", "state " + s
		})
	})
	t.Run("controller down fires", func(t *testing.T) {
		if s := p.alertState("SharqControllerDown"); s != "" {
			t.Fatalf("SharqControllerDown is %s while the controller runs", s)
		}
		tc.stop()
		eventually(t, "SharqControllerDown", 30*time.Second, func() (bool, string) {
			s := p.alertState("SharqControllerDown")
			return s == "pending" || s == "firing", "state " + s
		})
	})
}
