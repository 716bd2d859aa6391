package pgdriver_test

import (
	"strings"
	"testing"
)

// TestFairClaimGenericPlanGoesByIndex: the fair claim's generic plan finds
// the tenants (the skip scan's first probe and the next ones) and each
// tenant's jobs (its share, then the rest) through the tenant claim index,
// joins no set to the jobs table, and updates the picked jobs through the
// primary key, whatever the table was when the connection made its plan.
func TestFairClaimGenericPlanGoesByIndex(t *testing.T) {
	plans := genericPlans(t, "JobClaimFair", claimParams(map[string][2]string{
		"tenants": {"text[]", "'{}'"}, "weights": {"int[]", "'{}'"}}))
	for when, plan := range plans {
		// The joins are of the statement's own small sets (tenants, what
		// they took), never of the jobs table.
		byKey := strings.Contains(plan, "Index Scan using skiplock_jobs_pkey on skiplock_jobs j\n") &&
			strings.Contains(plan, "Index Cond: (id = ANY (")
		if !byKey || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Hash") ||
			strings.Count(plan, "Index Scan using skiplock_jobs_claim_tenant") < 4 {
			t.Errorf("the fair claim's generic plan made over %s does not go by index:\n%s", when, plan)
		}
	}
}
