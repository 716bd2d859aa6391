package contract_test

import (
	"strings"
	"testing"

	"github.com/skiplock/skiplock/contract"
)

// A kind's flow limits are read, and a bad one is refused naming its place.
func TestFlowLimits(t *testing.T) {
	set, err := contract.Parse([]byte(`version: 1
kinds:
  fetch:
    concurrency: {limit: 2, key: payload.host}
    rate_limit: {limit: 10, per: 1s, key: tenant}
`))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := set.Kind("fetch")
	if c, r := k.Concurrency, k.RateLimit; c == nil || c.Limit != 2 || c.Key != "payload.host" || r == nil ||
		r.Limit != 10 || r.Per.Seconds() != 1 || r.Key != "tenant" || !set.HasFlow() {
		t.Fatalf("flow limits: %+v %+v", k.Concurrency, k.RateLimit)
	}
	info := set.Kinds()[0]
	if info.Concurrency.Limit != 2 || info.RateLimit.Per != "1s" {
		t.Fatalf("kind info: %+v %+v", info.Concurrency, info.RateLimit)
	}
	for _, c := range []struct{ doc, want string }{
		{`concurrency: {limit: 0}`, "kinds.fetch.concurrency.limit: must be between 1 and 1000000"},
		{`concurrency: {limt: 1}`, "kinds.fetch.concurrency.limt: unknown field"},
		{`concurrency: {limit: 1, per: 1s}`, "kinds.fetch.concurrency.per: unknown field"},
		{`rate_limit: {limit: 5}`, "kinds.fetch.rate_limit.per: required"},
		{`rate_limit: {limit: 5, per: 0s}`, "kinds.fetch.rate_limit.per: must be greater than 0"},
		{`rate_limit: {limit: 5, per: 1s, key: host}`, "kinds.fetch.rate_limit.key: unknown reference"},
	} {
		_, err := contract.Parse([]byte("version: 1\nkinds:\n  fetch:\n    " + c.doc + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
}
