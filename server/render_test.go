package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAcceptedJobsRender: whatever the API accepts renders in every view.
// Random job specs (times across and just outside the accepted range,
// unicode, tags, metadata, priorities) are posted; each one answered 2xx
// must appear in every page of GET /v1/jobs and render in its own view, its
// workflow, the stats and queues, and after a cancel. Schedules likewise.
func TestAcceptedJobsRender(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		rng := rand.New(rand.NewSource(17))
		accepted := map[int64]map[string]any{}
		for i := 0; i < 150; i++ {
			spec := randomSpec(rng)
			a := b.do(t, "POST", "/v1/jobs", "", spec)
			switch {
			case a.status == 201 || a.status == 200:
				j := a.job()
				accepted[id(j)] = spec
			case a.status != 400:
				t.Errorf("POST %v: %d %s", spec, a.status, a.raw)
			}
		}
		if len(accepted) < 50 {
			t.Fatalf("only %d of 150 random specs accepted; the generator is too wild", len(accepted))
		}
		t.Logf("%d of 150 random specs accepted", len(accepted))
		listed := listAll(t, b)
		for jid, spec := range accepted {
			if !listed[jid] {
				t.Errorf("job %d (%v) is missing from GET /v1/jobs", jid, spec)
			}
			must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", jid), "", nil), 200)
			if wf, ok := spec["workflow_id"].(string); ok {
				must(t, b.do(t, "GET", "/v1/workflows/"+url.PathEscape(wf), "", nil), 200)
			}
		}
		must(t, b.do(t, "GET", "/v1/stats", "", nil), 200)
		must(t, b.do(t, "GET", "/v1/queues", "", nil), 200)
		for jid := range accepted {
			if a := b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", jid), "", nil); a.status != 200 && a.status != 409 {
				t.Errorf("cancel %d: %d %s", jid, a.status, a.raw)
			}
			must(t, b.do(t, "GET", fmt.Sprintf("/v1/jobs/%d", jid), "", nil), 200)
		}
		if listed := listAll(t, b); len(listed) != len(accepted) {
			t.Errorf("after cancel %d jobs listed, want %d", len(listed), len(accepted))
		}
		keys := map[string]bool{}
		for i := 0; i < 40; i++ {
			key := randomText(rng, 1+rng.Intn(20))
			body := map[string]any{"kind": randomText(rng, 1+rng.Intn(10)), "every_seconds": 1 + rng.Intn(100000),
				"payload": randomObject(rng, 2)}
			if rng.Intn(2) == 0 {
				body["next_run_at"] = randomTime(rng)
			}
			a := b.do(t, "PUT", "/v1/schedules/"+url.PathEscape(key), "", body)
			switch {
			case a.status == 200:
				keys[key] = true
			case a.status != 400:
				t.Errorf("PUT schedule %q %v: %d %s", key, body, a.status, a.raw)
			}
		}
		got := map[string]bool{}
		for _, s := range maps(must(t, b.do(t, "GET", "/v1/schedules", "", nil), 200).body["schedules"]) {
			got[s["key"].(string)] = true
		}
		for k := range keys {
			if !got[k] {
				t.Errorf("schedule %q is missing from GET /v1/schedules", k)
			}
		}
	})
}

// listAll reads every page of GET /v1/jobs and answers the ids listed.
func listAll(t *testing.T, b *bundle) map[int64]bool {
	t.Helper()
	seen := map[int64]bool{}
	cursor := ""
	for page := 0; page < 100; page++ {
		a := must(t, b.do(t, "GET", "/v1/jobs?limit=7&cursor="+cursor, "", nil), 200)
		for _, j := range a.jobs() {
			seen[id(j)] = true
		}
		if cursor, _ = a.body["next_cursor"].(string); cursor == "" {
			return seen
		}
	}
	t.Fatal("GET /v1/jobs pages do not end")
	return nil
}

// randomSpec answers a job spec, valid or just outside the rules.
func randomSpec(rng *rand.Rand) map[string]any {
	spec := map[string]any{"kind": randomText(rng, 1+rng.Intn(30)), "payload": randomObject(rng, 3)}
	if rng.Intn(3) == 0 {
		spec["priority"] = rng.Intn(13) - 1
	}
	if rng.Intn(3) == 0 {
		spec["run_at"] = randomTime(rng)
	} else if rng.Intn(4) == 0 {
		spec["delay_seconds"] = rng.Float64() * 1e6
	}
	if rng.Intn(3) == 0 {
		tags := make([]string, rng.Intn(5))
		for i := range tags {
			tags[i] = randomText(rng, 1+rng.Intn(12))
		}
		spec["tags"] = tags
	}
	if rng.Intn(3) == 0 {
		spec["metadata"] = randomObject(rng, 2)
	}
	opt := map[string]int{"queue": 8, "tenant": 8, "workflow_id": 20, "stage": 10, "op": 10, "idempotency_key": 30}
	for name, n := range opt {
		if rng.Intn(3) == 0 {
			spec[name] = randomText(rng, rng.Intn(n)+1)
		}
	}
	if rng.Intn(4) == 0 {
		spec["max_retries"] = rng.Intn(10)
	}
	return spec
}

// randomTime answers an RFC 3339 time: the edges of 1970–9999 in UTC, a
// second past them, or anywhere between in any offset.
func randomTime(rng *rand.Rand) string {
	edges := []string{"1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "9999-12-31T22:59:59+14:00",
		"9999-12-31T23:59:59-01:00", "1969-12-31T23:59:59Z", "1970-01-01T00:30:00+01:00", "0001-01-01T00:00:00Z"}
	if rng.Intn(3) == 0 {
		return edges[rng.Intn(len(edges))]
	}
	sec := rng.Int63n(253402300800) // 1970 to the end of 9999
	zone := time.FixedZone("", (rng.Intn(57)-28)*15*60)
	return time.Unix(sec, rng.Int63n(1e9)).In(zone).Format(time.RFC3339Nano)
}

// runeRanges are the text the generator draws from: ASCII, Latin, CJK,
// emoji (a surrogate pair in JSON), combining marks, RTL, separators.
var runeRanges = [][2]rune{{0x20, 0x7e}, {0xa0, 0x24f}, {0x4e00, 0x4fff}, {0x1f600, 0x1f64f}, {0x300, 0x36f},
	{0x5d0, 0x5ea}, {0x2028, 0x2029}, {0xfffd, 0xfffd}, {0x10000, 0x1000f}}

func randomText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		r := runeRanges[rng.Intn(len(runeRanges))]
		sb.WriteRune(r[0] + rune(rng.Intn(int(r[1]-r[0]+1))))
	}
	return sb.String()
}

func randomObject(rng *rand.Rand, depth int) map[string]any {
	obj := map[string]any{}
	for range rng.Intn(4) {
		var v any
		switch rng.Intn(5) {
		case 0:
			v = randomText(rng, rng.Intn(10))
		case 1:
			v = rng.NormFloat64() * 1e6
		case 2:
			v = rng.Intn(2) == 0
		case 3:
			if depth > 0 {
				v = randomObject(rng, depth-1)
			}
		case 4:
			v = []any{randomText(rng, 3), json.Number(fmt.Sprint(rng.Int63()))}
		}
		obj[randomText(rng, 1+rng.Intn(6))] = v
	}
	return obj
}
