package pgdriver_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// positional rewrites the named parameters of the statement name to $1…
// in the order of names, for a PREPARE.
func positional(t *testing.T, name string, names ...string) string {
	t.Helper()
	return regexp.MustCompile(`@\w+`).ReplaceAllStringFunc(pgdriver.Query(name), func(p string) string {
		for i, n := range names {
			if p[1:] == n {
				return "$" + strconv.Itoa(i+1)
			}
		}
		t.Fatalf("%s: parameter %s not named", name, p)
		return p
	})
}

// TestFairClaimGenericPlanGoesByIndex: the fair claim's generic plan finds
// the tenants and each tenant's head through the tenant claim index (the
// skip scan's later probes are a subplan EXPLAIN does not show), sorts
// nothing but what it took, and
// updates the picked jobs through the primary key, whatever the table was
// when the connection made its plan.
func TestFairClaimGenericPlanGoesByIndex(t *testing.T) {
	stmt := positional(t, "JobClaimFair", "queue", "worker", "kinds", "max", "tenants", "weights", "leases",
		"lease_kinds", "default_lease")
	plans := plansOf(t, stmt, pgdriver.GenericPlan, 0,
		"(text, text, text[], int, text[], int[], float8[], text[], float8)",
		"('q', 'w', '{}', 1000, '{}', '{}', '{}', '{}', 300)")
	for when, plan := range plans {
		// The joins are of the statement's own small sets (tenants, what
		// they took), never of the jobs table.
		byKey := strings.Contains(plan, "Index Scan using skiplock_jobs_pkey on skiplock_jobs j\n") &&
			strings.Contains(plan, "Index Cond: (id = ANY (")
		if !byKey || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Hash") ||
			strings.Count(plan, "Scan using skiplock_jobs_claim_tenant") < 3 {
			t.Errorf("the fair claim's generic plan made over %s does not go by index:\n%s", when, plan)
		}
	}
}
