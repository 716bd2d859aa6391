package pgdriver

import (
	"context"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// The statements of held jobs on a schema distributed on Citus
// (citus_held.sql): each names the job's queue, so that Citus sends it to
// that queue's shard alone, and none computes a time in a way Citus
// refuses in an update. Plain PostgreSQL runs queries.sql's, unchanged.
var (
	citusJobCompleteMany    = bind[completeManyQueuesArgs]("CitusJobCompleteMany")
	citusJobHeartbeatQueues = bind[heartbeatQueuesArgs]("CitusJobHeartbeatQueues")
	citusJobCompleteHeld    = bind[citusCompleteArgs]("CitusJobCompleteHeld")
	citusJobArchiveHeld     = bind[citusArchiveHeldArgs]("CitusJobArchiveHeld")
	citusJobRetryLater      = bind[citusRetryArgs]("CitusJobRetryLater")
	citusJobProgress        = bind[citusProgressArgs]("CitusJobProgress")
	citusJobProgressKeep    = bind[citusKeepLeaseArgs]("CitusJobProgressKeepLease")
	citusJobPauseHeld       = bind[citusHeldArgs]("CitusJobPauseHeld")
)

// The arguments of those statements: queries.sql's, and the queue.
type (
	completeManyQueuesArgs struct {
		completeManyArgs
		Queues []string `sql:"queues"`
	}
	heartbeatQueuesArgs struct {
		heartbeatArgs
		Queues []string `sql:"queues"`
	}
	citusCompleteArgs struct {
		completeHeldArgs
		Queue string `sql:"queue"`
	}
	citusArchiveHeldArgs struct {
		archiveHeldArgs
		Queue string `sql:"queue"`
	}
	citusRetryArgs struct {
		retryArgs
		Queue string `sql:"queue"`
	}
	citusProgressArgs struct {
		progressArgs
		Queue string `sql:"queue"`
	}
	citusKeepLeaseArgs struct {
		heldArgs
		Progress        *int    `sql:"progress"`
		ProgressMessage *string `sql:"progress_message"`
		Checkpoint      any     `sql:"checkpoint"`
		Queue           string  `sql:"queue"`
	}
)

// heldQueue answers, on a schema distributed on Citus, the queue that names
// a held job's shard, and false elsewhere. A holder that did not say its
// job's queue has it read first, from every shard (jobQueue).
func (e executor) heldQueue(ctx context.Context, h driver.HeldJob) (string, bool, error) {
	on, err := e.onCitus(ctx)
	if err != nil || !on {
		return "", false, err
	}
	if h.Queue != "" {
		return h.Queue, true, nil
	}
	q, err := e.jobQueue(ctx, h.ID)
	return q, true, err
}

// batchQueues answers the distinct queues of a batch whose every job
// names its queue (queue(i) for job i), nil when one does not: the batch
// then visits every shard.
func batchQueues(n int, queue func(i int) string) []string {
	var qs []string
	for i := range n {
		q := queue(i)
		if q == "" {
			return nil
		}
		if !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
	}
	return qs
}

// queueAt answers queues[i], "" past its end.
func queueAt(queues []string, i int) string {
	if i < len(queues) {
		return queues[i]
	}
	return ""
}

var citusJobByKey = bind[citusKeyArgs]("CitusJobByKey")

type citusKeyArgs struct {
	keyArgs
	Queue string `sql:"queue"`
}

// jobByKey reads the live job holding p's idempotency key: on Citus in
// p's queue's shard alone.
func (e executor) jobByKey(ctx context.Context, p *driver.InsertParams) (*driver.Job, error) {
	key := keyArgs{p.Tenant, p.IdempotencyKey}
	if on, err := e.onCitus(ctx); err != nil {
		return nil, err
	} else if on {
		return scanOne(e.q.QueryRow(ctx, citusJobByKey.SQL, citusJobByKey.Args(citusKeyArgs{key, p.Queue})...))
	}
	return scanOne(e.q.QueryRow(ctx, jobByKey.SQL, jobByKey.Args(key)...))
}

// citusProgress is JobProgress's statement on Citus for args in queue.
func citusProgress(args progressArgs, queue string) (string, []any) {
	if args.Lease > 0 {
		return citusJobProgress.SQL, citusJobProgress.Args(citusProgressArgs{args, queue})
	}
	keep := citusKeepLeaseArgs{args.heldArgs, args.Progress, args.ProgressMessage, args.Checkpoint, queue}
	return citusJobProgressKeep.SQL, citusJobProgressKeep.Args(keep)
}
