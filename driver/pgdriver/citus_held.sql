-- name: CitusJobCompleteMany
-- The statements of a held job on a schema distributed on Citus
-- (citus_held.go), each a copy of queries.sql's statement of the same name
-- without "Citus", with the job's queue added so that Citus sends it to the
-- queue's shard alone: change both together. Citus refuses in an update a
-- CASE or COALESCE around a function that is not immutable (now()), and a
-- STABLE function given a column (now() + an interval made from the row):
-- those parts take immutable forms here. No dependency is ever released:
-- Citus refuses them (citusRefuses).
-- The batch names its queues (@queues): of one queue, it is one shard's.
WITH d AS (
    DELETE FROM skiplock_jobs j
    WHERE j.id = ANY(@ids::bigint[]) AND j.queue = ANY(@queues::text[]) AND j.worker_id = @worker_id
      AND j.state = (SELECT 'running'::text) AND j.attempt = (@attempts::jsonb ->> j.id::text)::int
    RETURNING j.*, @results::jsonb -> j.id::text AS new_result
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'completed' END, result=d.new_result, finished_at=now(), updated_at=now(), lease_until=NULL, progress=CASE WHEN d.cancel_requested THEN d.progress ELSE 100 END}}
    FROM d
    RETURNING id, state, queue, kind, run_at, started_at
)
SELECT id, state, queue, kind, run_at, started_at, 0::bigint FROM a;

-- name: CitusJobHeartbeatQueues
-- CitusJobHeartbeat (citus_queries.sql) in the shards of the batch's queues.
UPDATE skiplock_jobs j
SET lease_until = to_timestamp(extract(epoch FROM now()) + (@leases::jsonb ->> j.id::text)::float8), heartbeat_at = now()
WHERE j.id = ANY(@ids::bigint[]) AND j.queue = ANY(@queues::text[]) AND j.worker_id = @worker_id AND j.state = 'running'
  AND j.attempt = (@attempts::jsonb ->> j.id::text)::int
RETURNING j.id, j.lease_until, j.cancel_requested, j.pause_requested;

-- name: CitusJobCompleteHeld
WITH d AS (
    DELETE FROM skiplock_jobs
    WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    RETURNING *
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'completed' END, result=@result::jsonb, finished_at=now(), updated_at=now(), lease_until=NULL, progress=CASE WHEN d.cancel_requested THEN d.progress ELSE 100 END}}
    FROM d
    RETURNING {{cols}}
)
SELECT {{cols a:}}, 0::bigint FROM a;

-- name: CitusJobArchiveHeld
WITH d AS (
    DELETE FROM skiplock_jobs
    WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state=@state, finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || @error::jsonb}}
FROM d
RETURNING {{cols}};

-- name: CitusJobRetryLater
-- The state's CASE in a subquery, where Citus allows it (the shard runs
-- it: with one copy of each shard, nothing can disagree); due by the
-- statement's start, not the clock, as Citus runs no volatile function in
-- an update: the caller took @run_at before the statement started.
UPDATE skiplock_jobs
SET state = (SELECT CASE WHEN @run_at::timestamptz <= statement_timestamp() THEN 'pending' ELSE 'scheduled' END), run_at = @run_at,
    attempt = attempt - @refund, worker_id = NULL, lease_until = NULL, errors = errors || @error::jsonb, updated_at = now()
WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
RETURNING {{cols}};

-- name: CitusJobProgress
-- With a lease (@lease > 0): now plus the kind's seconds, counted with
-- immutable functions (as CitusJobHeartbeat). Without one the driver runs
-- CitusJobProgressKeepLease: a CASE between the two is refused, and an
-- array indexed by the choice stopped the coordinator (Citus 13.2).
UPDATE skiplock_jobs
SET progress = coalesce(@progress, progress), progress_message = coalesce(@progress_message, progress_message),
    checkpoint = coalesce(@checkpoint::jsonb, checkpoint), heartbeat_at = now(), updated_at = now(),
    lease_until = to_timestamp(extract(epoch FROM now())
        + coalesce((@leases::float8[])[array_position(@lease_kinds::text[], kind)], @lease::float8))
WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
RETURNING id, lease_until, cancel_requested, pause_requested;

-- name: CitusJobProgressKeepLease
UPDATE skiplock_jobs
SET progress = coalesce(@progress, progress), progress_message = coalesce(@progress_message, progress_message),
    checkpoint = coalesce(@checkpoint::jsonb, checkpoint), heartbeat_at = now(), updated_at = now()
WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
RETURNING id, lease_until, cancel_requested, pause_requested;

-- name: CitusJobPauseHeld
UPDATE skiplock_jobs
SET state = 'paused', attempt = attempt - 1, worker_id = NULL, lease_until = NULL, pause_requested = false,
    updated_at = now()
WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
  AND pause_requested AND NOT cancel_requested
RETURNING {{cols}};
