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
        'message', 'lease expired', 'at', now(), 'retryable', true)), ARRAY['0', 'attempt'], j.attempt::text::jsonb)
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
        'message', 'lease expired', 'at', now(), 'retryable', true)), ARRAY['0', 'attempt'], j.attempt::text::jsonb)
WHERE j.id = ANY(ARRAY(SELECT id FROM x))
  AND j.state = 'running' AND j.lease_until < now() AND j.attempt <= j.max_retries AND NOT j.cancel_requested AND NOT j.pause_requested
RETURNING j.queue;

-- name: CitusJobRescueFinal
-- JobRescueFinal in two statements, cancelled jobs then failed ones: Citus
-- runs no now() inside a CASE, so each has its state and errors without one.
WITH d AS (
    DELETE FROM skiplock_jobs j WHERE j.id = ANY(ARRAY(
        SELECT id FROM skiplock_jobs
        WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND cancel_requested
        ORDER BY lease_until LIMIT @limit))
      AND j.state = 'running' AND j.lease_until < now() AND j.cancel_requested
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state='cancelled', finished_at=now(), updated_at=now(), lease_until=NULL}}
FROM d
RETURNING id, state;

-- name: CitusJobRescueExhausted
WITH d AS (
    DELETE FROM skiplock_jobs j WHERE j.id = ANY(ARRAY(
        SELECT id FROM skiplock_jobs
        WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND attempt > max_retries AND NOT cancel_requested
        ORDER BY lease_until LIMIT @limit))
      AND j.state = 'running' AND j.lease_until < now() AND j.attempt > j.max_retries AND NOT j.cancel_requested
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state='failed', finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || jsonb_set(jsonb_build_array(jsonb_build_object('attempt', 0, 'type', 'lease_expired', 'message', 'lease expired', 'at', now(), 'retryable', false)), ARRAY['0', 'attempt'], d.attempt::text::jsonb)}}
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

-- name: CitusJobQueue
-- A job's queue, read from every shard without a lock: the statements below
-- lock the job's row in its queue's shard, as Citus can (one shard's).
SELECT queue FROM skiplock_jobs WHERE id = @id;

-- name: CitusJobHeldForUpdate
-- queries.sql's JobHeldForUpdate with the queue added: change both together.
SELECT kind, attempt, max_retries, cancel_requested, pause_requested FROM skiplock_jobs
WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
FOR UPDATE;

-- name: CitusJobLiveForUpdate
SELECT state FROM skiplock_jobs WHERE id = @id AND queue = @queue FOR UPDATE;

-- name: CitusJobFailHeld
-- JobFailHeld, each part in the job's queue: one shard's statement. A copy
-- of queries.sql's JobFailHeld with the queue added: change both together.
-- Whether the retry is due is read in h (a wait of 0 or less), so that the
-- update's CASE holds no now(), which Citus refuses there.
WITH h AS (
    SELECT id, cancel_requested, pause_requested AND NOT cancel_requested AS pause,
           @retryable::boolean AND attempt <= max_retries AS retryable,
           now() + make_interval(secs => coalesce((@waits::float8[])[array_position(@wait_kinds::text[], kind)],
               @wait::float8)) AS run_at,
           coalesce((@waits::float8[])[array_position(@wait_kinds::text[], kind)], @wait::float8) <= 0 AS due
    FROM skiplock_jobs
    WHERE id = @id AND queue = @queue AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    FOR UPDATE
), kept AS (
    UPDATE skiplock_jobs j
    SET state = CASE WHEN h.pause THEN 'paused' WHEN h.due THEN 'pending' ELSE 'scheduled' END,
        run_at = CASE WHEN h.pause THEN j.run_at ELSE h.run_at END,
        attempt = j.attempt - CASE WHEN h.pause THEN 1 ELSE 0 END,
        errors = CASE WHEN h.pause THEN j.errors ELSE j.errors || jsonb_set(@error::jsonb, ARRAY['0', 'retryable'], 'true') END,
        worker_id = NULL, lease_until = NULL, pause_requested = false, updated_at = now()
    FROM h
    WHERE j.id = h.id AND j.queue = @queue AND (h.pause OR (h.retryable AND NOT h.cancel_requested))
    RETURNING {{cols j:}}
), d AS (
    DELETE FROM skiplock_jobs j USING h
    WHERE j.id = h.id AND j.queue = @queue AND NOT h.pause AND NOT (h.retryable AND NOT h.cancel_requested)
    RETURNING j.*, h.retryable AS entry_retryable
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'failed' END, finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || jsonb_set(@error::jsonb, ARRAY['0', 'retryable'], to_jsonb(d.entry_retryable))}}
    FROM d
    RETURNING {{cols}}
)
SELECT {{cols}}, false FROM kept
UNION ALL
SELECT {{cols a:}}, EXISTS (SELECT 1 FROM skiplock_job_deps dep WHERE dep.parent_id = a.id) FROM a;

-- name: CitusJobHeartbeat
-- JobHeartbeat across shards: Citus runs no STABLE function on a column in
-- a shard's update (now() + an interval made from the row's lease is one),
-- so the lease is counted in seconds, with immutable functions, from now()
-- read once.
UPDATE skiplock_jobs j
SET lease_until = to_timestamp(extract(epoch FROM now()) + (@leases::jsonb ->> j.id::text)::float8), heartbeat_at = now()
WHERE j.id = ANY(@ids::bigint[]) AND j.worker_id = @worker_id AND j.state = 'running'
  AND j.attempt = (@attempts::jsonb ->> j.id::text)::int
RETURNING j.id, j.lease_until, j.cancel_requested, j.pause_requested;

-- name: CitusJobByKey
-- JobByKey in the insert's queue, one shard: on Citus a key is unique per
-- tenant and queue (citus.sql), so a job of another queue with the same key
-- is not the one the insert met.
SELECT {{cols}} FROM skiplock_jobs WHERE tenant = @tenant AND idempotency_key = @key AND queue = @queue;


-- name: CitusJobQueues
-- The queues of live jobs, read from every shard without a lock.
SELECT id, queue FROM skiplock_jobs WHERE id = ANY(@ids::bigint[]);

-- name: CitusArchivedQueues
SELECT DISTINCT id, queue FROM skiplock_jobs_archive WHERE id = ANY(@ids::bigint[]);

-- name: CitusJobResumeMany
-- JobResumeMany in one queue, one shard's statement, without dependencies
-- (Citus refuses them). The state's CASE is in a subquery, where Citus
-- allows it: the shard runs it, and with one copy of each shard nothing
-- can disagree.
UPDATE skiplock_jobs j
SET state = (SELECT CASE WHEN j.run_at > now() THEN 'scheduled' ELSE 'pending' END), updated_at = now()
WHERE j.id = ANY(@ids::bigint[]) AND j.queue = @queue AND j.state = 'paused' AND {{Chunk}}
RETURNING {{cols}};

-- name: CitusJobUnarchive
-- JobUnarchive in one queue, one shard's statement, without parents to
-- wait for (Citus refuses dependencies): a key a live job holds fails it.
WITH d AS (
    DELETE FROM skiplock_jobs_archive WHERE id = @id AND queue = @queue AND state IN ('failed', 'cancelled')
    RETURNING *
)
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols d: state='pending', max_retries=d.max_retries - d.attempt_base + d.attempt, attempt_base=d.attempt, run_at=now(), finished_at=NULL, updated_at=now(), lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=false, progress=0, progress_message=''}}
FROM d
RETURNING {{cols}};

-- name: CitusJobUnarchiveMany
-- JobUnarchiveMany in one queue: a job whose key a live job holds stays.
WITH d AS (
    DELETE FROM skiplock_jobs_archive a WHERE a.id = ANY(@ids::bigint[]) AND a.queue = @queue AND a.state IN ('failed', 'cancelled') AND {{Chunk}}
      AND (a.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM skiplock_jobs l
           WHERE l.idempotency_key = a.idempotency_key AND l.tenant = a.tenant AND l.queue = @queue))
    RETURNING *
)
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols d: state='pending', max_retries=d.max_retries - d.attempt_base + d.attempt, attempt_base=d.attempt, run_at=now(), finished_at=NULL, updated_at=now(), lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=false, progress=0, progress_message=''}}
FROM d
RETURNING {{cols}};
