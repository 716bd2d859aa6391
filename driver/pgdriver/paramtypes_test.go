package pgdriver_test

import (
	"slices"
	"testing"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// int4Params are the statements' parameters that PostgreSQL types int4, by
// name: attempts, max_retries, a priority's rank and a batch's size. Ids, cursors and counts are bigint;
// a parameter typed int4 by inference (compared with a literal) refuses
// values past 2³¹. Sorted.
var int4Params = map[string][]string{
	"JobClaim":         {"after_rank"}, // 10 - priority
	"JobClaimFlow":     {"after_rank"}, // 10 - priority
	"JobClaimFair":     {"max"},        // a batch's size
	"JobHeldForUpdate": {"attempt"},    // attempt
	"JobProgress":      {"attempt"},    // attempt
	"JobArchiveHeld":   {"attempt"},    // attempt
	"JobCompleteHeld":  {"attempt"},    // attempt
	"JobPauseHeld":     {"attempt"},    // attempt
	"JobFailHeld":      {"attempt"},    // attempt
	// The Citus copies of those statements, with the queue added.
	"CitusJobFailHeld":          {"attempt"},
	"CitusJobHeldForUpdate":     {"attempt"},
	"CitusJobProgress":          {"attempt"},
	"CitusJobProgressKeepLease": {"attempt"},
	"CitusJobArchiveHeld":       {"attempt"},
	"CitusJobCompleteHeld":      {"attempt"},
	"CitusJobPauseHeld":         {"attempt"},
	"CitusJobRetryLater":        {"attempt", "refund"},
	"JanitorRunSave":            {"partitions"},        // partitions dropped by one run
	"JobRetryLater":             {"attempt", "refund"}, // attempt, attempt refunded
	"JobInsert":                 {"max_retries"},       // max_retries
	"JobInsertWithID":           {"max_retries"},       // max_retries
	"JobInsertStart":            {"max_retries"},       // max_retries
	"JobNextIDs":                {"count"},             // how many ids a batch takes
	"ProcessBeat":               {"pid"},               // an operating system's process id
}

// TestNoIDParameterIsInt4 prepares every statement and checks that its
// int4 parameters are the ones above: an id typed int4 works until the
// sequence passes 2³¹ and then fails every call.
func TestNoIDParameterIsInt4(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	conn := pgtest.Conn(t, url)
	names := pgdriver.QueryNames()
	slices.Sort(names)
	for _, name := range names {
		sd, err := conn.Prepare(t.Context(), "", pgdriver.Query(name))
		if err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
		params := pgdriver.QueryParams(name)
		if len(params) != len(sd.ParamOIDs) {
			t.Errorf("%s: %d parameters, %d of them named: every parameter is named", name, len(sd.ParamOIDs), len(params))
			continue
		}
		var got []string
		for i, oid := range sd.ParamOIDs {
			if oid != 23 { // int4
				continue
			}
			got = append(got, params[i])
		}
		slices.Sort(got)
		if !slices.Equal(got, int4Params[name]) {
			t.Errorf("%s: int4 parameters %v, want %v (ids and cursors are bigint)", name, got, int4Params[name])
		}
	}
}

// TestEveryNamedStatementIsBound: a statement with named parameters runs
// only through a package variable that binds it to its arguments' struct,
// which checks at load that each name has a field and each field a name.
func TestEveryNamedStatementIsBound(t *testing.T) {
	if u := pgdriver.UnboundQueries(); len(u) > 0 {
		t.Errorf("statements with named parameters no bind checks: %v", u)
	}
}
