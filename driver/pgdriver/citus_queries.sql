-- name: CitusJobRescuePaused
-- The maintenance statements on a schema distributed on Citus (citus.go).
-- They pick jobs across every queue, so across shards, where Citus locks no
-- row (FOR UPDATE needs one shard): the update checks again what the pick
-- read, under the row's lock, so that a job heartbeated or finished in
-- between is left alone. A shard's update may call no STABLE function on a
-- column (jsonb_build_object is one): the error entry is built without the
-- row, and its attempt set with immutable functions.
UPDATE skiplock_jobs j
SET state = 'paused', worker_id = NULL, lease_until = NULL, pause_requested = false, updated_at = now(),
    errors = j.errors || jsonb_set(jsonb_build_array(jsonb_build_object('attempt', 0, 'type', 'lease_expired',
        'message', 'lease expired', 'at', now(), 'retryable', true)), '{0,attempt}', j.attempt::text::jsonb)
WHERE j.id = ANY(ARRAY(
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND pause_requested AND NOT cancel_requested
      AND attempt <= max_retries ORDER BY lease_until LIMIT @limit))
  AND j.state = 'running' AND j.lease_until < now() AND j.pause_requested AND NOT j.cancel_requested AND j.attempt <= j.max_retries
RETURNING j.id;

-- name: CitusJobRescueRequeue
WITH x AS (
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND attempt <= max_retries AND NOT cancel_requested
      AND NOT pause_requested
    ORDER BY lease_until LIMIT @limit
)
UPDATE skiplock_jobs j
SET state = 'pending', worker_id = NULL, lease_until = NULL, updated_at = now(),
    errors = j.errors || jsonb_set(jsonb_build_array(jsonb_build_object('attempt', 0, 'type', 'lease_expired',
        'message', 'lease expired', 'at', now(), 'retryable', true)), '{0,attempt}', j.attempt::text::jsonb)
WHERE j.id = ANY(ARRAY(SELECT id FROM x))
  AND j.state = 'running' AND j.lease_until < now() AND j.attempt <= j.max_retries AND NOT j.cancel_requested AND NOT j.pause_requested
RETURNING j.queue;

-- name: CitusJobRescueFinal
WITH d AS (
    DELETE FROM skiplock_jobs j WHERE j.id = ANY(ARRAY(
        SELECT id FROM skiplock_jobs
        WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND (attempt > max_retries OR cancel_requested)
        ORDER BY lease_until LIMIT @limit))
      AND j.state = 'running' AND j.lease_until < now() AND (j.attempt > j.max_retries OR j.cancel_requested)
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'failed' END, finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || CASE WHEN d.cancel_requested THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('attempt', d.attempt, 'type', 'lease_expired', 'message', 'lease expired', 'at', now(), 'retryable', false)) END}}
FROM d
RETURNING id, state;

-- name: CitusJobPromoteScheduled
WITH x AS (
    SELECT id FROM skiplock_jobs WHERE state = 'scheduled' AND run_at <= now() AND run_at >= @since
    ORDER BY run_at LIMIT @limit
)
UPDATE skiplock_jobs j SET state = 'pending', updated_at = now()
WHERE j.id = ANY(ARRAY(SELECT id FROM x)) AND j.state = 'scheduled' AND j.run_at <= now()
RETURNING j.queue;
