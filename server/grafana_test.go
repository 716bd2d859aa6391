package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/skiplock/skiplock"
)

var metricName = regexp.MustCompile(`\bskiplock_[a-z0-9_]+\b`)

// exported answers the metric families a busy server's /metrics has.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	b := setup(t, databases[1], nil)
	for _, kind := range []string{"g.done", "g.retry", "g.wait"} {
		must(t, b.do(t, "POST", "/v1/jobs", "", fmt.Sprintf(`{"kind":%q}`, kind)), 201)
	}
	claimed := must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","max":2}`), 200).jobs()
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(claimed[0])), "", `{"worker_id":"w"}`), 200)
	must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/fail", id(claimed[1])), "",
		`{"worker_id":"w","error":{"type":"Busy","message":"later"},"retry_in_seconds":3600}`), 200)
	// A janitor run, so that its gauges are there too.
	if _, err := b.client.JanitorRun(t.Context(), skiplock.JanitorOptions{}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, l := range strings.Split(string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "#" && f[1] == "HELP" {
			names[f[2]] = true
		}
	}
	return names
}

// known reports the skiplock metrics an expression uses that /metrics lacks.
func known(t *testing.T, names map[string]bool, where, expr string) {
	t.Helper()
	for _, m := range metricName.FindAllString(expr, -1) {
		if !names[m] && !names[strings.TrimSuffix(m, "_total")] {
			t.Errorf("%s: %s is not a metric /metrics exports (expr %s)", where, m, expr)
		}
	}
}

// The Grafana dashboard and the alert rules in deploy/ use only metrics
// the server exports, and are well formed.
func TestGrafanaDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	t.Parallel()
	names := exported(t)
	raw, err := os.ReadFile("../deploy/grafana/skiplock-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if dash.Title == "" || len(dash.Panels) < 8 {
		t.Fatalf("dashboard %q has %d panels", dash.Title, len(dash.Panels))
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			known(t, names, "panel "+p.Title, q.Expr)
		}
	}
	raw, err = os.ReadFile("../deploy/prometheus/skiplock-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert       string
				Expr        string
				Labels      map[string]string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts: %v", err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %+v lacks alert, expr, severity or summary", r)
			}
			known(t, names, "alert "+r.Alert, r.Expr)
		}
	}
	for _, want := range []string{"SkiplockQueueBacklogOld", "SkiplockHighFailureRate", "SkiplockNoWorkers"} {
		if !strings.Contains(string(raw), "alert: "+want) {
			t.Errorf("alerts lack %s", want)
		}
	}
	if n < 4 {
		t.Errorf("%d alert rules", n)
	}
}
