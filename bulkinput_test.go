package skiplock_test

import (
	"errors"
	"testing"

	"github.com/skiplock/skiplock"
)

// A bulk filter's kind, queue, tenant or error text with a NUL, an id that
// is not one, a payload or metadata key no path names, is a
// *ValidationError naming it, before any statement: the same for the CLI, the server and a
// Go caller. Nothing is acted on.
func TestJobsBulkFilterText(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, false, nil)
		j := b.insert(t, c, taskArgs{Name: "a"}, &skiplock.InsertOpts{Tenant: "a"})
		nul, bad := "a\x00", "\xff"
		for _, c2 := range []struct {
			f     skiplock.BulkFilter
			field string
		}{
			{skiplock.BulkFilter{Kinds: []string{"wf_task", nul}}, "kind[1]"},
			{skiplock.BulkFilter{Queues: []string{"\x00"}}, "queue[0]"},
			{skiplock.BulkFilter{Kinds: []string{"wf_task"}, Tenant: &nul}, "tenant"},
			{skiplock.BulkFilter{Queues: []string{"default", bad}}, "queue[1]"},
			{skiplock.BulkFilter{ErrorType: nul}, "error_type"},
			{skiplock.BulkFilter{ErrorMessage: bad}, "error_message"},
			{skiplock.BulkFilter{IDs: []int64{j.ID, 0}}, "ids[1]"},
			{skiplock.BulkFilter{IDs: make([]int64, skiplock.MaxBulkIDs+1)}, "ids"},
			{skiplock.BulkFilter{Payload: map[string]any{"a.": 1}}, "payload"},
			{skiplock.BulkFilter{Metadata: map[string]any{"": 1}}, "metadata"},
		} {
			for _, dry := range []bool{true, false} {
				_, err := c.JobsBulk(b.ctx, skiplock.BulkParams{Action: skiplock.BulkCancel, Filter: c2.f, DryRun: dry})
				var ve *skiplock.ValidationError
				if !errors.As(err, &ve) || ve.Field != c2.field {
					t.Errorf("filter %+v: %v, want a *ValidationError naming %s", c2.f, err, c2.field)
				}
			}
		}
		if got := b.job(t, j.ID); got.State != skiplock.StatePending {
			t.Fatalf("refused bulk actions changed the job: %s", got.State)
		}
	})
}
