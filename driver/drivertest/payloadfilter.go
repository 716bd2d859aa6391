package drivertest

import (
	"encoding/json"
	"slices"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// The filters a listing and a bulk selection share (driver.Filter): the
// payload's keys (a.b nested), the attempt errors' type and message, the
// metadata, and a list of ids.
var _ = add("FilterPayloadAndErrors", func(e *env) {
	mk := func(payload, meta string) *driver.Job {
		p := job("a")
		p.Payload, p.Metadata = json.RawMessage(payload), json.RawMessage(meta)
		return e.insert(p)
	}
	j1 := mk(`{"customer_id": 42, "region": "eu", "order": {"id": "A-1", "lines": 3}}`, `{"team": "red"}`)
	j2 := mk(`{"customer_id": "42", "region": "us", "order": {"id": "A-2"}}`, `{"team": "blue"}`)
	j3 := mk(`{"customer_id": 7, "region": "eu", "flag": true, "gone": null}`, `{}`)
	j4 := mk(`{"customer_id": 42, "region": "eu"}`, `{"team": "red"}`)
	fail := func(j *driver.Job, typ, msg string) {
		e.t.Helper()
		c := e.claimID(j, "w1", lease)
		ae := attemptError(c, msg, false)
		ae.Type = typ
		if _, err := outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: held(c), Error: ae}); err != nil {
			e.t.Fatalf("fail job %d: %v", j.ID, err)
		}
	}
	fail(j1, "Timeout", "upstream Gateway timed out after 30s")
	fail(j2, "Refused", "card declined")
	e.complete(e.claimID(j3, "w1", lease), "")

	list := func(p driver.ListParams) []int64 {
		e.t.Helper()
		got, err := e.admin().JobList(e.ctx, p)
		if err != nil {
			e.t.Fatalf("JobList(%+v): %v", p, err)
		}
		return ids(got)
	}
	sel := func(p driver.SelectParams) []int64 {
		e.t.Helper()
		a := e.selectIDs(p)
		p.Archived = true
		return append(a, e.selectIDs(p)...)
	}
	for _, c := range []struct {
		name    string
		payload map[string]any
		meta    map[string]any
		etype   string
		emsg    string
		ids     []int64
		want    []int64 // newest first
	}{
		{name: "payload number", payload: map[string]any{"customer_id": 42}, want: []int64{j4.ID, j1.ID}},
		{name: "payload text of a number", payload: map[string]any{"customer_id": "42"}, want: []int64{j2.ID}},
		{name: "payload two keys", payload: map[string]any{"customer_id": 42, "region": "eu"}, want: []int64{j4.ID, j1.ID}},
		{name: "payload nested key", payload: map[string]any{"order.id": "A-2"}, want: []int64{j2.ID}},
		{name: "payload nested keys", payload: map[string]any{"order.id": "A-1", "order.lines": 3}, want: []int64{j1.ID}},
		{name: "payload boolean", payload: map[string]any{"flag": true}, want: []int64{j3.ID}},
		{name: "payload null", payload: map[string]any{"gone": nil}, want: []int64{j3.ID}},
		{name: "payload missing key", payload: map[string]any{"nope": 1}},
		{name: "payload and metadata", payload: map[string]any{"region": "eu"}, meta: map[string]any{"team": "red"}, want: []int64{j4.ID, j1.ID}},
		{name: "error type", etype: "Timeout", want: []int64{j1.ID}},
		{name: "error message, any case", emsg: "gateway TIMED", want: []int64{j1.ID}},
		{name: "error message of another", emsg: "declined", want: []int64{j2.ID}},
		{name: "error message, no job", emsg: "disk full"},
		{name: "error type and message", etype: "Refused", emsg: "timed out"},
		{name: "ids", ids: []int64{j3.ID, j1.ID, 1 << 40}, want: []int64{j3.ID, j1.ID}},
		{name: "ids and payload", ids: []int64{j3.ID, j1.ID}, payload: map[string]any{"region": "eu", "customer_id": 7}, want: []int64{j3.ID}},
	} {
		if c.ids == nil {
			got := list(driver.ListParams{Payload: c.payload, Metadata: c.meta, ErrorType: c.etype, ErrorMessage: c.emsg})
			if !slices.Equal(got, c.want) {
				e.t.Fatalf("%s: JobList: %v, want %v", c.name, got, c.want)
			}
		}
		got := sel(driver.SelectParams{Payload: c.payload, Metadata: c.meta, ErrorType: c.etype, ErrorMessage: c.emsg, IDs: c.ids})
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			e.t.Fatalf("%s: JobSelect: %v, want %v", c.name, got, want)
		}
	}
})
