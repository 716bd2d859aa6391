package server_test

import (
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
)

// TestKindsShowsTheStoredContracts: GET /v1/kinds answers the contract set
// stored in the database, with its version, and refuses jobs it refuses.
func TestKindsShowsTheStoredContracts(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		if a := must(t, b.do(t, "GET", "/v1/kinds", "", nil), 200); a.body["version"] != float64(0) {
			t.Fatalf("before any apply: %v", a.body)
		}
		set, err := contract.Parse([]byte("version: 1\nstrict: true\nkinds:\n  file: {queue: ingest}\n"))
		if err != nil {
			t.Fatal(err)
		}
		// Applied by another client on the same database.
		if _, err := newAdmin(t, b).ContractsApply(t.Context(), set); err != nil {
			t.Fatal(err)
		}
		a := must(t, b.do(t, "GET", "/v1/kinds", "", nil), 200)
		kinds := maps(a.body["kinds"])
		if a.body["version"] != float64(1) || a.body["strict"] != true || len(kinds) != 1 || kinds[0]["queue"] != "ingest" {
			t.Fatalf("after apply: %v", a.body)
		}
		e := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"fil"}`), 400)
		if _, field := e.errCode(); field != "kind" {
			t.Fatalf("unknown kind: %v", e.body)
		}
	})
}

func newAdmin(t *testing.T, b *bundle) *skiplock.Client {
	t.Helper()
	c, err := skiplock.NewClient(b.drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
