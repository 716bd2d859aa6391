package pgdriver_test

import (
	"slices"
	"testing"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// int4Params are the statements' parameters that PostgreSQL types int4, by
// position: attempts, max_retries, a priority's rank and a batch's size.
// Ids, cursors and counts are bigint; a parameter typed int4 by inference
// (compared with a literal) refuses values past 2³¹.
var int4Params = map[string][]int{
	"JobClaim":         {8},    // 10 - priority
	"JobClaimFair":     {4},    // a batch's size
	"JobHeldForUpdate": {2},    // attempt
	"JobProgress":      {2},    // attempt
	"JobArchiveHeld":   {2},    // attempt
	"JobCompleteHeld":  {2},    // attempt
	"JobPauseHeld":     {2},    // attempt
	"JanitorRunSave":   {10},   // partitions dropped by one run
	"JobRetryLater":    {2, 6}, // attempt, attempt refunded
	"JobInsert":        {12},   // max_retries
	"JobInsertWithID":  {12},   // max_retries
	"JobInsertStart":   {10},   // max_retries
	"JobNextIDs":       {1},    // how many ids a batch takes
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
		var got []int
		for i, oid := range sd.ParamOIDs {
			if oid == 23 { // int4
				got = append(got, i+1)
			}
		}
		if !slices.Equal(got, int4Params[name]) {
			t.Errorf("%s: int4 parameters $%v, want $%v (ids and cursors are bigint)", name, got, int4Params[name])
		}
	}
}
