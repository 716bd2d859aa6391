-- Every statement of the SQLite driver. {{cols}} expands to the job columns
-- in scan order; {{cols j: col=expr, …}} to the same list read from alias j
-- with the named columns replaced (see sqlset.go). Times are unix
-- microseconds; @now is the driver's clock (one per statement, from Go), so
-- that every process on the file agrees to the microsecond. Lists travel as
-- JSON arrays read with json_each. Rows move to the archive with an INSERT …
-- SELECT and a DELETE in one transaction: SQLite has no data-modifying CTEs.

-- name: JobInsert
INSERT INTO skiplock_jobs (kind, op, queue, tenant, state, priority, payload, metadata, tags, max_retries,
    run_at, created_at, updated_at, idempotency_key, depends_on, workflow_id, stage, run_on_parent_failure)
VALUES (@kind, nullif(@op, ''), @queue, @tenant,
    CASE WHEN @paused THEN 'paused' WHEN @waiting THEN 'waiting'
         WHEN coalesce(@run_at, @now) > @now THEN 'scheduled' ELSE 'pending' END,
    @priority, @payload, @metadata, @tags, @max_retries, coalesce(@run_at, @now), @now, @now,
    nullif(@key, ''), @deps, nullif(@workflow, ''), nullif(@stage, ''), @ropf)
ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING {{cols}};

-- name: JobInsertFast
INSERT INTO skiplock_jobs (kind, op, queue, tenant, state, priority, payload, metadata, tags, max_retries,
    run_at, created_at, updated_at, workflow_id, stage)
VALUES (@kind, nullif(@op, ''), @queue, @tenant, @state, @priority, @payload, @metadata, @tags, @max_retries,
    @run_at, @now, @now, nullif(@workflow, ''), nullif(@stage, ''));

-- name: JobInsertStart
-- A plain job that starts at once for @worker (lease @lease µs), as a claim
-- would start it, unless it is due later, paused, or its queue paused.
INSERT INTO skiplock_jobs (kind, op, queue, tenant, state, priority, payload, metadata, tags, max_retries,
    run_at, created_at, updated_at, workflow_id, stage, run_on_parent_failure,
    attempt, worker_id, started_at, heartbeat_at, lease_until)
SELECT @kind, nullif(@op, ''), @queue, @tenant, s.state, @priority, @payload, @metadata, @tags, @max_retries,
    coalesce(@run_at, @now), @now, @now, nullif(@workflow, ''), nullif(@stage, ''), @ropf,
    CASE WHEN s.state = 'running' THEN 1 ELSE 0 END,
    CASE WHEN s.state = 'running' THEN @worker END,
    CASE WHEN s.state = 'running' THEN @now END,
    CASE WHEN s.state = 'running' THEN @now END,
    CASE WHEN s.state = 'running' THEN @now + @lease END
FROM (SELECT CASE WHEN @paused THEN 'paused' WHEN coalesce(@run_at, @now) > @now THEN 'scheduled'
                  WHEN EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused) THEN 'pending'
                  ELSE 'running' END AS state) AS s
RETURNING {{cols}};

-- name: JobByKey
SELECT {{cols}} FROM skiplock_jobs WHERE tenant = @tenant AND idempotency_key = @key;

-- name: UniqueKeyHolder
SELECT job_id, expires_at FROM skiplock_unique_keys WHERE tenant = @tenant AND key = @key;

-- name: UniqueKeyPut
INSERT INTO skiplock_unique_keys (tenant, key, job_id, expires_at) VALUES (@tenant, @key, @job, @expires)
ON CONFLICT (tenant, key) DO UPDATE SET job_id = excluded.job_id, expires_at = excluded.expires_at;

-- name: UniqueKeyPrune
-- Window keys expired by @before (µs) whose job is not live.
DELETE FROM skiplock_unique_keys WHERE rowid IN (
    SELECT u.rowid FROM skiplock_unique_keys u
    WHERE u.expires_at <= @before
      AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j
                      WHERE j.id = u.job_id AND j.state NOT IN ('completed', 'failed', 'cancelled'))
    LIMIT @limit);

-- name: JobParentStates
SELECT id, state FROM skiplock_jobs WHERE id IN (SELECT value FROM json_each(@ids))
UNION ALL
SELECT id, state FROM skiplock_jobs_archive WHERE id IN (SELECT value FROM json_each(@ids));

-- name: JobDepInsert
INSERT OR IGNORE INTO skiplock_job_deps (job_id, parent_id) SELECT @job, value FROM json_each(@parents);

-- name: JobClaim
-- @leases is {"kind": lease µs}; @kinds_any is true when the claim takes any kind.
-- +@queue: a bare parameter compared like the partial index's WHERE makes
-- SQLite re-prepare the statement on every call; the unary plus does not.
UPDATE skiplock_jobs
SET state = 'running', attempt = attempt + 1, worker_id = @worker, started_at = @now, heartbeat_at = @now,
    updated_at = @now,
    lease_until = @now + coalesce((SELECT l.value FROM json_each(@leases) l WHERE l.key = skiplock_jobs.kind), @default_lease)
WHERE id IN (
    SELECT id FROM skiplock_jobs
    WHERE state = 'pending' AND queue = +@queue
      AND (@kinds_any OR kind IN (SELECT value FROM json_each(@kinds)))
      AND (@tenant IS NULL OR tenant = @tenant)
      AND (10 - priority, run_at, id) > (@after_rank, @after_run_at, @after_id)
      AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
    ORDER BY priority DESC, run_at, id
    LIMIT @max)
RETURNING {{cols}};

-- name: JobHeartbeat
UPDATE skiplock_jobs AS j
SET lease_until = @now + c.value ->> 'lease', heartbeat_at = @now
FROM json_each(@batch) AS c
WHERE j.id = c.value ->> 'id' AND j.attempt = c.value ->> 'attempt' AND j.worker_id = @worker AND j.state = 'running'
RETURNING id, lease_until, cancel_requested, pause_requested;

-- name: JobCompleteArchive
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state=CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'completed' END, result=c.value -> 'result', finished_at=@now, updated_at=@now, lease_until=NULL, progress=CASE WHEN j.cancel_requested THEN j.progress ELSE 100 END}}
FROM json_each(@batch) AS c JOIN skiplock_jobs j ON j.id = c.value ->> 'id'
WHERE j.attempt = c.value ->> 'attempt' AND j.worker_id = @worker AND j.state = 'running'
RETURNING id, state, queue, kind, run_at, started_at;

-- name: JobDeleteMany
DELETE FROM skiplock_jobs WHERE id IN (SELECT value FROM json_each(@ids));

-- name: JobDelete
DELETE FROM skiplock_jobs WHERE id = @id;

-- name: JobHeld
SELECT kind, attempt, max_retries, cancel_requested, pause_requested FROM skiplock_jobs
WHERE id = @id AND attempt = @attempt AND worker_id = @worker AND state = 'running';

-- name: JobArchiveHeld
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state=@state, finished_at=@now, updated_at=@now, lease_until=NULL, errors=CASE WHEN @entry IS NULL THEN j.errors ELSE json_insert(j.errors, '$[#]', json(@entry)) END}}
FROM skiplock_jobs j
WHERE j.id = @id AND j.attempt = @attempt AND j.worker_id = @worker AND j.state = 'running'
RETURNING {{cols}};

-- name: JobRetryLater
UPDATE skiplock_jobs
SET state = CASE WHEN @run_at <= @now THEN 'pending' ELSE 'scheduled' END, run_at = @run_at,
    attempt = attempt - @unspend, worker_id = NULL, lease_until = NULL, updated_at = @now,
    errors = CASE WHEN @entry IS NULL THEN errors ELSE json_insert(errors, '$[#]', json(@entry)) END
WHERE id = @id AND attempt = @attempt AND worker_id = @worker AND state = 'running'
RETURNING {{cols}};

-- name: JobProgress
UPDATE skiplock_jobs
SET progress = coalesce(@progress, progress), progress_message = coalesce(@message, progress_message),
    checkpoint = coalesce(json(@checkpoint), checkpoint), heartbeat_at = @now, updated_at = @now,
    lease_until = CASE WHEN @lease > 0
        THEN @now + coalesce((SELECT l.value FROM json_each(@leases) l WHERE l.key = skiplock_jobs.kind), @lease)
        ELSE lease_until END
WHERE id = @id AND attempt = @attempt AND worker_id = @worker AND state = 'running'
RETURNING id, lease_until, cancel_requested, pause_requested;

-- name: JobGet
SELECT {{cols}} FROM skiplock_jobs WHERE id = @id
UNION ALL
SELECT {{cols}} FROM skiplock_jobs_archive WHERE id = @id
LIMIT 1;

-- fragment: JobFilter
-- The filter of every listing (JobList) and bulk selection (JobSelectLive,
-- JobSelectArchived), written once, with pgdriver's parameters. Each list
-- is a JSON array, any of its values, NULL for any job. @metadata and
-- @payload are JSON objects from a JSON path ($."key") to the value the
-- job's must hold there, compared as JSON (type and value); the driver
-- builds the paths, and the client refuses keys with '"'. @error_message is
-- found in any attempt's message, ASCII letters compared without case.
(@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
      AND (@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))
      AND (@queues IS NULL OR queue IN (SELECT value FROM json_each(@queues)))
      AND (@tenant IS NULL OR tenant = @tenant)
      AND (@ids IS NULL OR id IN (SELECT value FROM json_each(@ids)))
      AND (@workflow_id = '' OR workflow_id = @workflow_id)
      AND (@tags IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(@tags) t
                                        WHERE t.value NOT IN (SELECT value FROM json_each(tags))))
      AND (@metadata IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(@metadata) f
            WHERE json_type(metadata, f.key) IS NOT f.type OR json_extract(metadata, f.key) IS NOT f.value))
      AND (@payload IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(@payload) f
            WHERE json_type(payload, f.key) IS NOT f.type OR json_extract(payload, f.key) IS NOT f.value))
      AND (@worker_id = '' OR worker_id = @worker_id) AND (@idempotency_key = '' OR idempotency_key = @idempotency_key)
      AND (@error_type = '' OR EXISTS (SELECT 1 FROM json_each(errors) e WHERE json_extract(e.value, '$.type') = @error_type))
      AND (@error_message = '' OR EXISTS (SELECT 1 FROM json_each(errors) e
            WHERE instr(lower(json_extract(e.value, '$.message')), lower(@error_message)) > 0))
      AND (@created_after IS NULL OR created_at >= @created_after) AND (@created_before IS NULL OR created_at < @created_before)
      AND (@finished_after IS NULL OR finished_at >= @finished_after) AND (@finished_before IS NULL OR finished_at < @finished_before)

-- name: JobList
-- SQLite plans a statement once, whatever its parameters: of the archive's
-- four branches one runs, each reading the archive by its access path (the
-- worker's index, created_at's, finished_at's, else ids newest first), so
-- that a listing by worker or time does not read the whole archive.
-- Given a key, the driver runs a copy whose key term is plain (jobListByKey).
-- The filter itself is JobFilter.
SELECT * FROM (
    SELECT {{cols}} FROM skiplock_jobs
    WHERE @live AND (@before_id = 0 OR id < @before_id)
      AND {{JobFilter}}
    ORDER BY id DESC LIMIT @limit)
UNION ALL
SELECT * FROM (
    SELECT {{cols}} FROM skiplock_jobs_archive INDEXED BY skiplock_jobs_archive_worker
    WHERE @archived AND @worker_id <> '' AND worker_id = @worker_id AND (@before_id = 0 OR id < @before_id)
      AND {{JobFilter}}
    ORDER BY id DESC LIMIT @limit)
UNION ALL
SELECT * FROM (
    SELECT {{cols}} FROM skiplock_jobs_archive INDEXED BY skiplock_jobs_archive_created
    WHERE @archived AND @worker_id = '' AND (@created_after IS NOT NULL OR @created_before IS NOT NULL)
      AND created_at >= coalesce(@created_after, -9223372036854775808)
      AND created_at < coalesce(@created_before, 9223372036854775807) AND (@before_id = 0 OR id < @before_id)
      AND {{JobFilter}}
    ORDER BY id DESC LIMIT @limit)
UNION ALL
SELECT * FROM (
    SELECT {{cols}} FROM skiplock_jobs_archive INDEXED BY skiplock_jobs_archive_finished
    WHERE @archived AND @worker_id = '' AND @created_after IS NULL AND @created_before IS NULL
      AND (@finished_after IS NOT NULL OR @finished_before IS NOT NULL)
      AND finished_at >= coalesce(@finished_after, -9223372036854775808)
      AND finished_at < coalesce(@finished_before, 9223372036854775807) AND (@before_id = 0 OR id < @before_id)
      AND {{JobFilter}}
    ORDER BY id DESC LIMIT @limit)
UNION ALL
SELECT * FROM (
    SELECT {{cols}} FROM skiplock_jobs_archive
    WHERE @archived AND @worker_id = '' AND @created_after IS NULL AND @created_before IS NULL
      AND @finished_after IS NULL AND @finished_before IS NULL AND (@before_id = 0 OR id < @before_id)
      AND {{JobFilter}}
    ORDER BY id DESC LIMIT @limit)
ORDER BY id DESC LIMIT @limit;

-- name: JobLiveState
SELECT state FROM skiplock_jobs WHERE id = @id;

-- name: JobArchivedState
SELECT state FROM skiplock_jobs_archive WHERE id = @id;

-- name: JobArchiveLive
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state='cancelled', finished_at=@now, updated_at=@now}}
FROM skiplock_jobs j WHERE j.id = @id AND j.state IN ('pending', 'scheduled', 'waiting', 'paused')
RETURNING {{cols}};

-- name: JobRequestCancel
UPDATE skiplock_jobs SET cancel_requested = 1, updated_at = @now
WHERE id = @id AND state = 'running'
RETURNING {{cols}};

-- name: JobUnarchive
-- A job retried while some of its parents have not finished waits for them.
-- The attempt that failed leaves no start, heartbeat or lease behind.
-- Its attempt number goes on counting and max_retries moves up by the
-- attempts spent since its last retry (see PostgreSQL's JobUnarchive).
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols a: state=CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps dep WHERE dep.job_id = a.id) THEN 'waiting' ELSE 'pending' END, max_retries=a.max_retries - a.attempt_base + a.attempt, attempt_base=a.attempt, run_at=@now, finished_at=NULL, updated_at=@now, lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=0, progress=0, progress_message=''}}
FROM skiplock_jobs_archive a WHERE a.id = @id AND a.state IN ('failed', 'cancelled')
RETURNING {{cols}};

-- name: ArchiveDelete
DELETE FROM skiplock_jobs_archive WHERE id = @id;

-- name: JobPause
UPDATE skiplock_jobs SET state = 'paused', updated_at = @now
WHERE id = @id AND state IN ('pending', 'scheduled', 'waiting')
RETURNING {{cols}};

-- name: JobResume
UPDATE skiplock_jobs
SET state = CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = skiplock_jobs.id) THEN 'waiting'
                 WHEN run_at > @now THEN 'scheduled' ELSE 'pending' END,
    updated_at = @now
WHERE id = @id AND state = 'paused'
RETURNING {{cols}};

-- name: JobRescueRequeue
UPDATE skiplock_jobs
SET state = 'pending', worker_id = NULL, lease_until = NULL, updated_at = @now,
    errors = json_insert(errors, '$[#]', json_object('attempt', attempt, 'type', 'lease_expired',
        'message', 'lease expired', 'at', @now_text, 'retryable', json('true')))
WHERE id IN (
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < @now AND lease_until >= @since AND attempt <= max_retries AND NOT cancel_requested
      AND NOT pause_requested
    ORDER BY lease_until LIMIT @limit)
RETURNING queue;

-- name: JobRescueFinal
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state=CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'failed' END, finished_at=@now, updated_at=@now, lease_until=NULL, errors=CASE WHEN j.cancel_requested THEN j.errors ELSE json_insert(j.errors, '$[#]', json_object('attempt', j.attempt, 'type', 'lease_expired', 'message', 'lease expired', 'at', @now_text, 'retryable', json('false'))) END}}
FROM skiplock_jobs j
WHERE j.id IN (
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < @now AND lease_until >= @since AND (attempt > max_retries OR cancel_requested)
    ORDER BY lease_until LIMIT @limit)
RETURNING id, state;

-- name: JobPromoteScheduled
UPDATE skiplock_jobs SET state = 'pending', updated_at = @now
WHERE id IN (
    SELECT id FROM skiplock_jobs WHERE state = 'scheduled' AND run_at <= @now AND run_at >= @since
    ORDER BY run_at LIMIT @limit)
RETURNING queue;

-- name: DepsSettled
-- Dependencies whose parent has finished.
SELECT d.job_id, d.parent_id, a.state
FROM skiplock_job_deps d JOIN skiplock_jobs_archive a ON a.id = d.parent_id
LIMIT @limit;

-- name: DepsOfParents
DELETE FROM skiplock_job_deps WHERE parent_id IN (SELECT value FROM json_each(@ids)) RETURNING job_id, parent_id;

-- name: DepDelete
DELETE FROM skiplock_job_deps WHERE job_id = @job AND parent_id = @parent;

-- name: JobReleaseWaiting
UPDATE skiplock_jobs
SET state = CASE WHEN run_at > @now THEN 'scheduled' ELSE 'pending' END, updated_at = @now
WHERE state = 'waiting' AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = skiplock_jobs.id)
RETURNING queue;

-- name: JobCancelDependent
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state='cancelled', finished_at=@now, updated_at=@now, errors=json_insert(j.errors, '$[#]', json_object('attempt', j.attempt, 'type', 'dependency', 'message', @message, 'at', @now_text, 'retryable', json('false')))}}
FROM skiplock_jobs j
WHERE j.id = @id AND j.state IN ('waiting', 'paused') AND NOT j.run_on_parent_failure
RETURNING id;

-- name: QueuePause
INSERT INTO skiplock_queues (name, paused, created_at, updated_at) VALUES (@name, @paused, @now, @now)
ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at;

-- name: QueueExists
SELECT EXISTS (SELECT 1 FROM skiplock_queues WHERE name = @name)
    OR EXISTS (SELECT 1 FROM skiplock_jobs WHERE queue = @name)
    OR EXISTS (SELECT 1 FROM skiplock_jobs_archive WHERE queue = @name);

-- name: QueueCountsLive
-- Pending jobs, most of a busy queue's, are counted in the claim index's
-- order (queue first) without a sort; the others, fewer, by a scan that
-- sorts only them.
SELECT queue, 'pending', count(*), coalesce(@now - min(run_at), 0)
FROM skiplock_jobs WHERE state = 'pending' GROUP BY queue
UNION ALL
SELECT queue, state, count(*), 0 FROM skiplock_jobs WHERE state <> 'pending' GROUP BY queue, state;

-- name: QueueCountsArchive
SELECT queue, state, count(*), 0 FROM skiplock_jobs_archive GROUP BY queue, state;

-- name: QueueSettings
SELECT name, paused FROM skiplock_queues;

-- name: QueueNamesArchiveRecent
-- Along skiplock_jobs_archive_finished: only the recent rows.
SELECT DISTINCT queue FROM skiplock_jobs_archive WHERE finished_at >= @since;

-- name: QueueRecordArchived
INSERT INTO skiplock_queues (name, paused, created_at, updated_at)
SELECT DISTINCT queue, 0, @now, @now FROM skiplock_jobs_archive WHERE finished_at >= @since
ON CONFLICT (name) DO NOTHING;

-- name: LeaderAttempt
INSERT INTO skiplock_leaders (name, leader_id, elected_at, expires_at)
VALUES (@name, @id, @now, @now + @ttl)
ON CONFLICT (name) DO UPDATE
SET leader_id = excluded.leader_id, expires_at = excluded.expires_at,
    elected_at = CASE WHEN skiplock_leaders.leader_id = excluded.leader_id THEN skiplock_leaders.elected_at ELSE excluded.elected_at END
WHERE skiplock_leaders.leader_id = excluded.leader_id OR skiplock_leaders.expires_at < @now
RETURNING leader_id;

-- name: LeaderResign
DELETE FROM skiplock_leaders WHERE name = @name AND leader_id = @id;

-- name: ScheduleUpsert
INSERT INTO skiplock_schedules (tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at)
VALUES (@tenant, @key, @kind, @queue, json(@payload), @every, coalesce(@next, @now), @now, @now)
ON CONFLICT (tenant, key) DO UPDATE
SET kind = excluded.kind, queue = excluded.queue, payload = excluded.payload,
    every_seconds = excluded.every_seconds, next_run_at = excluded.next_run_at, updated_at = excluded.updated_at
RETURNING tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at;

-- name: ScheduleDelete
DELETE FROM skiplock_schedules WHERE tenant = @tenant AND key = @key;

-- name: ScheduleList
SELECT tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at
FROM skiplock_schedules WHERE @tenant IS NULL OR tenant = @tenant ORDER BY tenant, key;

-- name: ScheduleDue
SELECT tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at
FROM skiplock_schedules WHERE next_run_at <= @now
ORDER BY next_run_at LIMIT @limit;

-- name: ScheduleAdvance
UPDATE skiplock_schedules SET next_run_at = @next, updated_at = @now WHERE tenant = @tenant AND key = @key;

-- name: JobChangedSince
SELECT * FROM (SELECT {{cols}} FROM skiplock_jobs WHERE updated_at > @since ORDER BY updated_at LIMIT @limit)
UNION ALL
SELECT * FROM (SELECT {{cols}} FROM skiplock_jobs_archive WHERE finished_at > @since ORDER BY finished_at LIMIT @limit)
ORDER BY updated_at, id LIMIT @limit;

-- name: JobStatsCounts
SELECT state, kind, count(*) FROM skiplock_jobs GROUP BY state, kind
UNION ALL
SELECT state, kind, count(*) FROM skiplock_jobs_archive GROUP BY state, kind;

-- name: JobStatsFinished
SELECT state, sum(finished_at > @now - 60000000), count(*)
FROM skiplock_jobs_archive WHERE finished_at > @now - 3600000000 GROUP BY state;

-- name: JobActivityFinished
SELECT (finished_at - @since) / @bucket_micros, state, count(*)
FROM skiplock_jobs_archive WHERE finished_at >= @since GROUP BY 1, 2;

-- name: JobActivityRunning
SELECT count(*), count(DISTINCT worker_id) FROM skiplock_jobs WHERE state = 'running';

-- name: TokenCreate
INSERT INTO skiplock_tokens (name, hash, role, tenant, created_at) VALUES (@name, @hash, @role, @tenant, @now)
RETURNING id, name, hash, role, tenant, created_at;

-- name: TokenByHash
SELECT id, name, hash, role, tenant, created_at FROM skiplock_tokens WHERE hash = @hash;

-- name: TokenList
SELECT id, name, hash, role, tenant, created_at FROM skiplock_tokens ORDER BY id;

-- name: TokenDelete
DELETE FROM skiplock_tokens WHERE id = @id;

-- name: TokenCount
SELECT count(*) FROM skiplock_tokens;

-- name: PeriodicLastTicks
SELECT name, last_tick FROM skiplock_periodic;

-- name: PeriodicAdvance
INSERT INTO skiplock_periodic (name, last_tick, updated_at) VALUES (@name, @tick, @now)
ON CONFLICT (name) DO UPDATE
SET last_tick = max(skiplock_periodic.last_tick, excluded.last_tick), updated_at = excluded.updated_at;

-- name: JobSelectLive
-- Bulk actions page through their jobs by id; @after is the cursor.
SELECT id FROM skiplock_jobs
WHERE {{JobFilter}}
  AND id > @after
ORDER BY id LIMIT @limit;

-- name: JobSelectArchived
SELECT id FROM skiplock_jobs_archive
WHERE {{JobFilter}}
  AND id > @after
ORDER BY id LIMIT @limit;

-- name: JobMetricsLive
SELECT queue, kind, state, count(*),
       sum(attempt > attempt_base AND state IN ('pending', 'scheduled')),
       coalesce(@now - min(CASE WHEN state = 'pending' THEN run_at END), 0)
FROM skiplock_jobs GROUP BY queue, kind, state;

-- name: JobMetricsFinished
SELECT queue, kind, state, count(*) FROM skiplock_jobs_archive
WHERE finished_at > @since GROUP BY queue, kind, state;

-- name: CounterList
SELECT name, value FROM skiplock_counters;

-- name: CounterAdd
INSERT INTO skiplock_counters (name, value) VALUES (@name, @n)
ON CONFLICT (name) DO UPDATE SET value = skiplock_counters.value + excluded.value;
-- Pausing running jobs, and the requests a running job's process looks for.

-- name: JobRequestPause
UPDATE skiplock_jobs SET pause_requested = 1, updated_at = @now
WHERE id = @id AND state = 'running' AND NOT cancel_requested
RETURNING {{cols}};

-- name: JobPauseHeld
-- The attempt is not spent: resumed, the job runs it again from its checkpoint.
UPDATE skiplock_jobs
SET state = 'paused', attempt = attempt - 1, worker_id = NULL, lease_until = NULL, pause_requested = 0,
    updated_at = @now
WHERE id = @id AND attempt = @attempt AND worker_id = @worker AND state = 'running' AND pause_requested
  AND NOT cancel_requested
RETURNING {{cols}};

-- name: JobRescuePaused
-- The attempt is spent, as for any expired lease: the worker may still be
-- running it, and a number given again would let its late report finish
-- the next run. A job with no attempt left fails (JobRescueFinal).
UPDATE skiplock_jobs
SET state = 'paused', worker_id = NULL, lease_until = NULL, pause_requested = 0, updated_at = @now,
    errors = json_insert(errors, '$[#]', json_object('attempt', attempt, 'type', 'lease_expired',
        'message', 'lease expired', 'at', @now_text, 'retryable', json('true')))
WHERE id IN (
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < @now AND lease_until >= @since AND pause_requested AND NOT cancel_requested
      AND attempt <= max_retries    ORDER BY lease_until LIMIT @limit)
RETURNING id;

-- name: JobStopRequests
-- By primary key: cheap enough to run every second for every running job.
SELECT id, cancel_requested, pause_requested FROM skiplock_jobs
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'running' AND (cancel_requested OR pause_requested);

-- The stored contract set.

-- name: ContractsPut
INSERT INTO skiplock_contracts (version, source, digest, strict, kinds, applied_at)
SELECT coalesce(max(version), 0) + 1, @source, @digest, @strict, @kinds, @now FROM skiplock_contracts
RETURNING version, source, digest, strict, kinds, applied_at;

-- name: ContractsCurrent
SELECT version, source, digest, strict, kinds, applied_at FROM skiplock_contracts ORDER BY version DESC LIMIT 1;

-- name: JobRestoreQueue
-- A job from the vault goes back to the queue as JobUnarchive puts an
-- archived job back: pending, waiting while a parent is live, the attempt
-- counting on, max_retries moved up by the attempts spent since the last
-- retry. An id the database holds, live or archived, or a key a live job
-- holds, is skipped.
WITH r AS (
    SELECT @id AS id, @kind AS kind, NULLIF(@op, '') AS op, @queue AS queue, @tenant AS tenant, @state AS state,
        @priority AS priority, @payload AS payload, @metadata AS metadata, @tags AS tags, @attempt AS attempt,
        @max_retries AS max_retries, @run_at AS run_at, @created_at AS created_at, @started_at AS started_at,
        @finished_at AS finished_at, @updated_at AS updated_at, @lease_until AS lease_until,
        NULLIF(@worker_id, '') AS worker_id, @heartbeat_at AS heartbeat_at, @progress AS progress,
        @progress_message AS progress_message, @checkpoint AS checkpoint, @result AS result, @errors AS errors,
        NULLIF(@idempotency_key, '') AS idempotency_key, @depends_on AS depends_on,
        NULLIF(@workflow_id, '') AS workflow_id, NULLIF(@stage, '') AS stage, @cancel_requested AS cancel_requested,
        @run_on_parent_failure AS run_on_parent_failure, @attempt_base AS attempt_base
)
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols r: state=CASE WHEN EXISTS (SELECT 1 FROM skiplock_jobs p WHERE p.id IN (SELECT value FROM json_each(r.depends_on))) THEN 'waiting' ELSE 'pending' END, max_retries=r.max_retries - r.attempt_base + r.attempt, attempt_base=r.attempt, run_at=@now, finished_at=NULL, updated_at=@now, lease_until=NULL, worker_id=NULL, cancel_requested=0, progress=0, progress_message=''}}
FROM r
WHERE NOT EXISTS (SELECT 1 FROM skiplock_jobs_archive a WHERE a.id = r.id)
ON CONFLICT DO NOTHING
RETURNING id, queue, state;

-- name: JobRestoreDeps
-- A job restored waiting waits for its live parents.
INSERT INTO skiplock_job_deps (job_id, parent_id)
SELECT @id, p.id FROM skiplock_jobs p WHERE p.id IN (SELECT value FROM json_each(@depends_on))
ON CONFLICT DO NOTHING;

-- name: JobRestoreArchive
-- A job from the vault goes back to the archive as it was. An id the
-- database holds, live or archived, is skipped.
WITH r AS (
    SELECT @id AS id, @kind AS kind, NULLIF(@op, '') AS op, @queue AS queue, @tenant AS tenant, @state AS state,
        @priority AS priority, @payload AS payload, @metadata AS metadata, @tags AS tags, @attempt AS attempt,
        @max_retries AS max_retries, @run_at AS run_at, @created_at AS created_at, @started_at AS started_at,
        @finished_at AS finished_at, @updated_at AS updated_at, @lease_until AS lease_until,
        NULLIF(@worker_id, '') AS worker_id, @heartbeat_at AS heartbeat_at, @progress AS progress,
        @progress_message AS progress_message, @checkpoint AS checkpoint, @result AS result, @errors AS errors,
        NULLIF(@idempotency_key, '') AS idempotency_key, @depends_on AS depends_on,
        NULLIF(@workflow_id, '') AS workflow_id, NULLIF(@stage, '') AS stage, @cancel_requested AS cancel_requested,
        @run_on_parent_failure AS run_on_parent_failure, @attempt_base AS attempt_base
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols r:}}
FROM r
WHERE r.finished_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.id = r.id)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: JobRestoreSequence
-- Ids handed out after a restore stay above the ids restored: the hot
-- table's AUTOINCREMENT counter moves up to the largest (an insert into it
-- moves it already; one into the archive does not). JobRestoreSequenceNew
-- makes the counter when the table never had a row.
UPDATE sqlite_sequence SET seq = max(seq, @max_id) WHERE name = 'skiplock_jobs';

-- name: JobRestoreSequenceNew
INSERT INTO sqlite_sequence (name, seq)
SELECT 'skiplock_jobs', @max_id
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'skiplock_jobs');

-- name: ProcessBeat
INSERT INTO skiplock_processes (id, host, pid, version, queues, started_at, heartbeat_at)
VALUES (@id, @host, @pid, @version, @queues, @started_at, @now)
ON CONFLICT (id) DO UPDATE
SET host = excluded.host, pid = excluded.pid, version = excluded.version, queues = excluded.queues,
    heartbeat_at = excluded.heartbeat_at;

-- name: ProcessExpire
DELETE FROM skiplock_processes WHERE heartbeat_at < @now - @stale;

-- name: ProcessDelete
DELETE FROM skiplock_processes WHERE id = @id;

-- name: ProcessList
SELECT id, host, pid, version, queues, started_at, heartbeat_at
FROM skiplock_processes WHERE heartbeat_at >= @now - @stale ORDER BY id;
