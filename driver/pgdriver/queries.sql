-- Every statement of the PostgreSQL driver. {{cols}} expands to the job
-- columns in scan order; {{cols d: col=expr, …}} to the same list read from
-- alias d with the named columns replaced (see sqlset.go). Parameters are
-- named, @name: the driver numbers them $1, $2, … at load, and the struct
-- each statement is bound to (sqlset.Bind) must give exactly those names.

-- name: JobInsert
-- Into the hot table, or a spill table for a plain job (spill.go).
INSERT INTO {{table}} (kind, op, queue, tenant, state, priority, payload, metadata, tags,
    max_retries, run_at, idempotency_key, depends_on, workflow_id, stage, run_on_parent_failure)
VALUES (@kind, nullif(@op, ''), @queue, @tenant,
    CASE WHEN @paused::boolean THEN 'paused' WHEN @waiting::boolean THEN 'waiting'
         WHEN coalesce(@run_at::timestamptz, now()) > now() THEN 'scheduled' ELSE 'pending' END,
    @priority, @payload, @metadata, @tags, @max_retries, coalesce(@run_at::timestamptz, now()), nullif(@idempotency_key, ''), @depends_on, nullif(@workflow_id, ''), nullif(@stage, ''), @run_on_parent_failure)
ON CONFLICT DO NOTHING
RETURNING {{cols}};

-- name: JobInsertStart
-- A plain job that starts at once for worker @worker_id (lease @lease seconds), as a
-- claim would start it, unless it is due later, paused, or its queue paused.
-- MATERIALIZED: inlined, the state's queue probe ran once per use of
-- s.state (six index scans of skiplock_queues per insert instead of one).
WITH s AS MATERIALIZED (
    SELECT CASE WHEN @paused::boolean THEN 'paused'
                WHEN coalesce(@run_at::timestamptz, now()) > now() THEN 'scheduled'
                WHEN EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused) THEN 'pending'
                ELSE 'running' END AS state
)
INSERT INTO {{table}} (kind, op, queue, tenant, state, priority, payload, metadata, tags,
    max_retries, run_at, workflow_id, stage, run_on_parent_failure,
    attempt, worker_id, started_at, heartbeat_at, lease_until)
SELECT @kind, nullif(@op, ''), @queue, @tenant, s.state, @priority, @payload, @metadata, @tags, @max_retries, coalesce(@run_at::timestamptz, now()),
    nullif(@workflow_id, ''), nullif(@stage, ''), @run_on_parent_failure,
    CASE WHEN s.state = 'running' THEN 1 ELSE 0 END,
    CASE WHEN s.state = 'running' THEN @worker_id::text END,
    CASE WHEN s.state = 'running' THEN now() END,
    CASE WHEN s.state = 'running' THEN now() END,
    CASE WHEN s.state = 'running' THEN now() + make_interval(secs => @lease::float8) END
FROM s
RETURNING {{cols}};

-- name: JobByKey
SELECT {{cols}} FROM skiplock_jobs WHERE tenant = @tenant AND idempotency_key = @key;

-- name: UniqueKeyTake
INSERT INTO skiplock_unique_keys (tenant, key, job_id, expires_at)
VALUES (@tenant, @key, nextval('skiplock_jobs_id_seq'), now() + make_interval(secs => @window::float8))
ON CONFLICT (tenant, key) DO UPDATE SET job_id = EXCLUDED.job_id, expires_at = EXCLUDED.expires_at
    WHERE skiplock_unique_keys.expires_at <= now()
RETURNING job_id, true;

-- name: UniqueKeyHolder
SELECT job_id FROM skiplock_unique_keys WHERE tenant = @tenant AND key = @key;

-- name: UniqueKeyPrune
-- Window keys expired by @before whose job is not live; a key being taken now is
-- locked, and skipped.
DELETE FROM skiplock_unique_keys k
WHERE (k.tenant, k.key) IN (
    SELECT u.tenant, u.key FROM skiplock_unique_keys u
    WHERE u.expires_at <= @before
      AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j
                      WHERE j.id = u.job_id AND j.state NOT IN ('completed', 'failed', 'cancelled'))
    LIMIT @limit
    FOR UPDATE SKIP LOCKED);

-- name: JobInsertWithID
INSERT INTO skiplock_jobs (id, kind, op, queue, tenant, state, priority, payload, metadata, tags,
    max_retries, run_at, idempotency_key, depends_on, workflow_id, stage, run_on_parent_failure)
VALUES (@id, @kind, nullif(@op, ''), @queue, @tenant,
    CASE WHEN @paused::boolean THEN 'paused' WHEN @waiting::boolean THEN 'waiting'
         WHEN coalesce(@run_at::timestamptz, now()) > now() THEN 'scheduled' ELSE 'pending' END,
    @priority, @payload, @metadata, @tags, @max_retries, coalesce(@run_at::timestamptz, now()), nullif(@idempotency_key, ''), @depends_on, nullif(@workflow_id, ''), nullif(@stage, ''), @run_on_parent_failure)
ON CONFLICT DO NOTHING
RETURNING {{cols}};

-- name: JobNextIDs
SELECT nextval('skiplock_jobs_id_seq') FROM generate_series(1, @count);

-- name: JobParentStates
WITH live AS (SELECT id, state FROM skiplock_jobs WHERE id = ANY(@ids) FOR SHARE)
SELECT id, state FROM live
UNION ALL
SELECT id, state FROM skiplock_jobs_archive WHERE id = ANY(@ids) AND id NOT IN (SELECT id FROM live);

-- name: JobDepInsert
INSERT INTO skiplock_job_deps (job_id, parent_id) SELECT @job_id, unnest(@parents::bigint[]) ON CONFLICT DO NOTHING;

-- name: JobClaim
-- The update finds the picked jobs by primary key from an array, not by a
-- join: a join's generic plan made while the table was empty (vacuumed to
-- no pages) walked the whole table and probed the picked jobs for each row,
-- for as long as the connection lived. Rows come back in id order; the
-- driver puts them in claim order.
WITH picked AS (
    SELECT id FROM skiplock_jobs
    WHERE state = 'pending' AND queue = @queue
      AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
      AND (@tenant::text IS NULL OR tenant = @tenant)
      -- Claim order is (10 - priority, run_at, id); @after_rank = -1 starts at the head.
      AND ((10 - priority), run_at, id) > (@after_rank::int, @after_run_at::timestamptz, @after_id::bigint)
      AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
    ORDER BY (10 - priority), run_at, id
    LIMIT @max
    FOR UPDATE SKIP LOCKED
)
UPDATE skiplock_jobs j
SET state = 'running', attempt = j.attempt + 1, worker_id = @worker_id, started_at = now(), heartbeat_at = now(),
    updated_at = now(),
    lease_until = now() + make_interval(secs => coalesce((@leases::float8[])[array_position(@lease_kinds::text[], j.kind)], @default_lease::float8))
-- The queue, redundant here, makes the statement one shard's on Citus.
WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.queue = @queue
RETURNING {{cols j:}};

-- name: JobHeartbeat
-- As in JobCompleteMany, the jobs are found by primary key from the id array
-- @ids alone; their attempts (@attempts) and lease seconds (@leases) are jsonb objects
-- keyed by id, and the state is a subquery's value.
UPDATE skiplock_jobs j
SET lease_until = now() + make_interval(secs => (@leases::jsonb ->> j.id::text)::float8), heartbeat_at = now()
WHERE j.id = ANY(@ids::bigint[]) AND j.worker_id = @worker_id AND j.state = (SELECT 'running'::text)
  AND j.attempt = (@attempts::jsonb ->> j.id::text)::int
RETURNING j.id, j.lease_until, j.cancel_requested, j.pause_requested;

-- name: JobCompleteMany
-- The jobs are found by primary key from the id array @ids alone; their
-- attempts (@attempts) and results (@results) are jsonb objects keyed by id. A join with
-- the batch instead let a generic plan made while the table was empty
-- (vacuumed to no pages) walk the whole table and probe the batch for each
-- row, for as long as the connection lived. The state is compared with a
-- subquery's value, which the planner cannot see: written as a constant, it
-- matches the running-lease index, whose scan reads every dead entry until
-- vacuum (100x slower under churn).
WITH d AS (
    DELETE FROM skiplock_jobs j
    WHERE j.id = ANY(@ids::bigint[]) AND j.worker_id = @worker_id AND j.state = (SELECT 'running'::text)
      AND j.attempt = (@attempts::jsonb ->> j.id::text)::int
    RETURNING j.*, @results::jsonb -> j.id::text AS new_result
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'completed' END, result=d.new_result, finished_at=now(), updated_at=now(), lease_until=NULL, progress=CASE WHEN d.cancel_requested THEN d.progress ELSE 100 END}}
    FROM d
    RETURNING id, state, queue, kind, run_at, started_at
), released AS (
    -- The EXISTS runs once: with no dependencies anywhere (the usual case)
    -- the batch skips a probe of skiplock_job_deps per job.
    DELETE FROM skiplock_job_deps WHERE parent_id IN (SELECT id FROM a WHERE state = 'completed')
        AND EXISTS (SELECT 1 FROM skiplock_job_deps)
    RETURNING job_id, parent_id
)
SELECT id, state, queue, kind, run_at, started_at, (SELECT count(*) FROM released) FROM a;

-- name: JobCompleteHeld
-- One held job, found by primary key; the finished row and the count of
-- dependents it released come back from the same statement.
WITH d AS (
    DELETE FROM skiplock_jobs WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    RETURNING *
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'completed' END, result=@result::jsonb, finished_at=now(), updated_at=now(), lease_until=NULL, progress=CASE WHEN d.cancel_requested THEN d.progress ELSE 100 END}}
    FROM d
    RETURNING {{cols}}
), released AS (
    DELETE FROM skiplock_job_deps WHERE parent_id IN (SELECT id FROM a WHERE state = 'completed')
        AND EXISTS (SELECT 1 FROM skiplock_job_deps)
    RETURNING job_id
)
SELECT {{cols a:}}, (SELECT count(*) FROM released) FROM a;

-- name: JobHeldForUpdate
-- citus_queries.sql has a copy with the queue added (CitusJobHeldForUpdate): change both.
SELECT kind, attempt, max_retries, cancel_requested, pause_requested FROM skiplock_jobs
WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
FOR UPDATE;

-- name: JobArchiveHeld
WITH d AS (
    DELETE FROM skiplock_jobs WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state=@state, finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || @error::jsonb}}
FROM d
RETURNING {{cols}};

-- name: JobRetryLater
-- The clock, not the transaction's start: a run_at of now taken inside the
-- transaction (outcome.Fail) is due.
UPDATE skiplock_jobs
SET state = CASE WHEN @run_at::timestamptz <= clock_timestamp() THEN 'pending' ELSE 'scheduled' END, run_at = @run_at,
    attempt = attempt - @refund, worker_id = NULL, lease_until = NULL, errors = errors || @error::jsonb, updated_at = now()
WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
RETURNING {{cols}};

-- name: JobProgress
UPDATE skiplock_jobs
SET progress = coalesce(@progress, progress), progress_message = coalesce(@progress_message, progress_message),
    checkpoint = coalesce(@checkpoint::jsonb, checkpoint), heartbeat_at = now(), updated_at = now(),
    lease_until = CASE WHEN @lease::float8 > 0
        THEN now() + make_interval(secs => coalesce((@leases::float8[])[array_position(@lease_kinds::text[], kind)], @lease::float8))
        ELSE lease_until END
WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
RETURNING id, lease_until, cancel_requested, pause_requested;

-- name: JobGet
SELECT {{cols}} FROM skiplock_jobs WHERE id = @id
UNION ALL
(SELECT {{cols}} FROM skiplock_jobs_archive WHERE id = @id LIMIT 1)
LIMIT 1;

-- fragment: JobFilter
-- The filter of every listing (JobList) and bulk selection (JobSelectLive,
-- JobSelectArchived), written once; sqlitedriver's has the same parameters.
-- Each list is any of its values, empty for any job. @metadata and @payload
-- are JSON objects the job's must contain (@>), so that a jsonb_path_ops GIN
-- index serves them (`skiplock migrate filter-indexes`). @error_message is
-- found in any attempt's message, letters compared without case.
(cardinality(@states::text[]) = 0 OR state = ANY(@states::text[]))
   AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
   AND (cardinality(@queues::text[]) = 0 OR queue = ANY(@queues::text[]))
   AND (@tenant::text IS NULL OR tenant = @tenant::text)
   AND (cardinality(@ids::bigint[]) = 0 OR id = ANY(@ids::bigint[]))
   AND (@workflow_id = '' OR workflow_id = @workflow_id)
   AND (cardinality(@tags::text[]) = 0 OR tags @> @tags::text[])
   AND (@metadata::jsonb IS NULL OR metadata @> @metadata::jsonb)
   AND (@payload::jsonb IS NULL OR payload @> @payload::jsonb)
   AND (@worker_id = '' OR worker_id = @worker_id) AND (@idempotency_key = '' OR idempotency_key = @idempotency_key)
   AND (@error_type = '' OR errors @> jsonb_build_array(jsonb_build_object('type', @error_type::text)))
   AND (@error_message = '' OR EXISTS (SELECT 1 FROM jsonb_array_elements(errors) e
                                       WHERE strpos(lower(e->>'message'), lower(@error_message::text)) > 0))
   AND (@created_after::timestamptz IS NULL OR created_at >= @created_after) AND (@created_before::timestamptz IS NULL OR created_at < @created_before)
   AND (@finished_after::timestamptz IS NULL OR finished_at >= @finished_after) AND (@finished_before::timestamptz IS NULL OR finished_at < @finished_before)

-- name: JobList
-- @before_id, the cursor, is a job id: bigint. Compared with the literal 0 alone,
-- PostgreSQL would type it int4 and refuse every cursor past 2³¹. The driver
-- runs it unprepared, so that each listing is planned with its own filters
-- and reaches the archive's indexes (tags, metadata, errors, worker_id,
-- created_at, finished_at) instead of a generic plan that cannot. Of the
-- two archive branches one runs (@by_time: a time bound is given): the planner
-- would walk the id index backwards through every row newer than a time
-- window, not knowing ids grow with time; `id + 0` makes it read the window
-- by its index (and finished_at's partitions) and sort what matched.
-- @idempotency_key, a key, is found by the key indexes (idempotency_key, tenant).
-- The filter itself is JobFilter.
(SELECT {{cols}} FROM skiplock_jobs
 WHERE @live::boolean AND (@before_id::bigint = 0 OR id < @before_id::bigint)
   AND {{JobFilter}}
 ORDER BY id DESC LIMIT @limit)
UNION ALL
(SELECT {{cols}} FROM skiplock_jobs_archive
 WHERE @archived::boolean AND NOT @by_time::boolean AND (@before_id::bigint = 0 OR id < @before_id::bigint)
   AND {{JobFilter}}
 ORDER BY id DESC LIMIT @limit)
UNION ALL
(SELECT {{cols}} FROM skiplock_jobs_archive
 WHERE @archived::boolean AND @by_time::boolean AND (@before_id::bigint = 0 OR id < @before_id::bigint)
   AND {{JobFilter}}
 ORDER BY id + 0 DESC LIMIT @limit)
ORDER BY id DESC LIMIT @limit;

-- name: JobLiveForUpdate
SELECT state FROM skiplock_jobs WHERE id = @id FOR UPDATE;

-- name: JobArchivedState
SELECT state FROM skiplock_jobs_archive WHERE id = @id LIMIT 1;

-- name: JobArchiveLive
WITH d AS (
    DELETE FROM skiplock_jobs WHERE id = @id AND state IN ('pending', 'scheduled', 'waiting', 'paused')
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state='cancelled', finished_at=now(), updated_at=now(), errors=d.errors || @errors::jsonb}}
FROM d
RETURNING {{cols}};

-- name: JobRequestCancel
UPDATE skiplock_jobs SET cancel_requested = true, updated_at = now()
WHERE id = @id AND state = 'running'
RETURNING {{cols}};

-- name: JobUnarchive
-- A job retried while some of its parents have not finished waits for them.
-- Its live parents are locked, so that none finishes unseen meanwhile: a
-- parent's completion waits for the retry to commit, then releases the job
-- as any waiting dependent; one that finished first is not found here.
-- The attempt that failed leaves no start, heartbeat or lease behind.
-- The attempt number goes on counting: a worker whose lease ran out may
-- still report its run, and must not match a run after the retry. The
-- budget comes back as max_retries moved up by the attempts spent since
-- the last retry (driver.Job.AttemptBase).
WITH parents AS (
    SELECT p.id FROM skiplock_jobs p
    WHERE p.id IN (SELECT dep.parent_id FROM skiplock_job_deps dep WHERE dep.job_id = @id)
    FOR KEY SHARE
), d AS (
    DELETE FROM skiplock_jobs_archive WHERE id = @id AND state IN ('failed', 'cancelled')
    RETURNING *
)
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols d: state=CASE WHEN EXISTS (SELECT 1 FROM parents) THEN 'waiting' ELSE 'pending' END, max_retries=d.max_retries - d.attempt_base + d.attempt, attempt_base=d.attempt, run_at=now(), finished_at=NULL, updated_at=now(), lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=false, progress=0, progress_message=''}}
FROM d
RETURNING {{cols}};

-- name: JobPause
UPDATE skiplock_jobs SET state = 'paused', updated_at = now()
WHERE id = @id AND state IN ('pending', 'scheduled', 'waiting')
RETURNING {{cols}};

-- name: JobResume
UPDATE skiplock_jobs j
SET state = CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = j.id) THEN 'waiting'
                 WHEN j.run_at > now() THEN 'scheduled' ELSE 'pending' END,
    updated_at = now()
WHERE j.id = @id AND j.state = 'paused'
RETURNING {{cols}};

-- name: JobRescueRequeue
-- This statement, JobRescueFinal and JobPromoteScheduled change the jobs
-- they picked by primary key from an array of their ids, as JobClaim does,
-- never by a join (see JobClaim).
WITH x AS (
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND attempt <= max_retries AND NOT cancel_requested
      AND NOT pause_requested
    ORDER BY lease_until LIMIT @limit FOR UPDATE SKIP LOCKED
)
UPDATE skiplock_jobs j
SET state = 'pending', worker_id = NULL, lease_until = NULL, updated_at = now(),
    errors = j.errors || jsonb_build_array(jsonb_build_object('attempt', j.attempt, 'type', 'lease_expired',
        'message', 'lease expired', 'at', now(), 'retryable', true))
WHERE j.id = ANY(ARRAY(SELECT id FROM x))
RETURNING j.queue;

-- name: JobRescueFinal
WITH d AS (
    DELETE FROM skiplock_jobs j WHERE j.id = ANY(ARRAY(
        SELECT id FROM skiplock_jobs
        WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND (attempt > max_retries OR cancel_requested)
        ORDER BY lease_until LIMIT @limit FOR UPDATE SKIP LOCKED))
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state=CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'failed' END, finished_at=now(), updated_at=now(), lease_until=NULL, errors=d.errors || CASE WHEN d.cancel_requested THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('attempt', d.attempt, 'type', 'lease_expired', 'message', 'lease expired', 'at', now(), 'retryable', false)) END}}
FROM d
RETURNING id, state;

-- name: JobPromoteScheduled
WITH x AS (
    SELECT id FROM skiplock_jobs WHERE state = 'scheduled' AND run_at <= now() AND run_at >= @since
    ORDER BY run_at LIMIT @limit FOR UPDATE SKIP LOCKED
)
UPDATE skiplock_jobs j SET state = 'pending', updated_at = now()
WHERE j.id = ANY(ARRAY(SELECT id FROM x))
RETURNING j.queue;

-- name: DepsSettled
-- Dependencies whose parent has finished. LATERAL drives the join from the
-- (small) deps table: a plain join lets the planner scan the whole archive.
SELECT d.job_id, d.parent_id, a.state
FROM skiplock_job_deps d
CROSS JOIN LATERAL (SELECT state FROM skiplock_jobs_archive a WHERE a.id = d.parent_id LIMIT 1) a
LIMIT @limit;

-- name: DepsOfParents
DELETE FROM skiplock_job_deps WHERE parent_id = ANY(@parents) RETURNING job_id, parent_id;

-- name: DepDelete
DELETE FROM skiplock_job_deps WHERE job_id = @job_id AND parent_id = @parent_id;

-- name: JobReleaseWaiting
-- Makes the waiting jobs without parents left runnable, and answers the
-- queue of every such job the statement saw, released here or not. Two
-- releases race for a job when a parent's completion and the leader's
-- settling both see it: the loser's update waits for the row, finds it
-- runnable and passes it over, but keeps the row locked until its
-- transaction ends, so a claim woken by the winner's commit skips the job.
-- The loser wakes the queue too, at its own commit.
WITH c AS (
    SELECT j.id, j.queue FROM skiplock_jobs j
    WHERE j.state = 'waiting' AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = j.id)
), u AS (
    UPDATE skiplock_jobs j
    SET state = CASE WHEN j.run_at > now() THEN 'scheduled' ELSE 'pending' END, updated_at = now()
    FROM c WHERE j.id = c.id AND j.state = 'waiting'
)
SELECT queue FROM c;

-- name: JobCancelDependent
WITH d AS (
    DELETE FROM skiplock_jobs WHERE id = @id AND state IN ('waiting', 'paused') AND NOT run_on_parent_failure
    RETURNING *
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols d: state='cancelled', finished_at=now(), updated_at=now(), errors=d.errors || jsonb_build_array(jsonb_build_object('attempt', d.attempt, 'type', 'dependency', 'message', @reason::text, 'at', now(), 'retryable', false))}}
FROM d
RETURNING id;

-- name: QueuePause
-- now() in the values, not the update: Citus runs no STABLE function in the
-- DO UPDATE of its reference table of queues.
INSERT INTO skiplock_queues (name, paused, updated_at) VALUES (@name, @paused, now())
ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = EXCLUDED.updated_at;

-- name: QueueExists
SELECT EXISTS (SELECT 1 FROM skiplock_queues WHERE name = @name)
    OR EXISTS (SELECT 1 FROM skiplock_jobs WHERE queue = @name)
    OR EXISTS (SELECT 1 FROM skiplock_jobs_archive WHERE queue = @name);

-- name: QueueCountsLive
-- The age is a difference of epochs, not of timestamps: now() - '-infinity'
-- is an error, while the epochs' difference is an infinite float8, which
-- the driver holds finite.
SELECT queue, state, count(*),
       coalesce((extract(epoch FROM now()) - extract(epoch FROM min(run_at) FILTER (WHERE state = 'pending')))::float8, 0)
FROM skiplock_jobs GROUP BY queue, state;

-- name: QueueCountsArchive
SELECT queue, state, count(*), 0::float8 FROM skiplock_jobs_archive GROUP BY queue, state;

-- name: QueueSettings
SELECT name, paused FROM skiplock_queues;

-- name: QueueNamesArchiveRecent
-- Along the BRIN index on finished_at: only the recent rows.
SELECT DISTINCT queue FROM skiplock_jobs_archive WHERE finished_at >= @since;

-- name: QueueRecordArchived
INSERT INTO skiplock_queues (name)
SELECT DISTINCT queue FROM skiplock_jobs_archive WHERE finished_at >= @since
ON CONFLICT (name) DO NOTHING;

-- name: LeaderAttempt
INSERT INTO skiplock_leaders (name, leader_id, expires_at)
VALUES (@name, @leader_id, now() + make_interval(secs => @ttl::float8))
ON CONFLICT (name) DO UPDATE
SET leader_id = EXCLUDED.leader_id, expires_at = EXCLUDED.expires_at,
    elected_at = CASE WHEN skiplock_leaders.leader_id = EXCLUDED.leader_id THEN skiplock_leaders.elected_at ELSE now() END
WHERE skiplock_leaders.leader_id = EXCLUDED.leader_id OR skiplock_leaders.expires_at < now()
RETURNING leader_id;

-- name: LeaderResign
DELETE FROM skiplock_leaders WHERE name = @name AND leader_id = @leader_id;

-- name: ScheduleUpsert
INSERT INTO skiplock_schedules (tenant, key, kind, queue, payload, every_seconds, next_run_at)
VALUES (@tenant, @key, @kind, @queue, @payload, @every, coalesce(@next_run_at::timestamptz, now()))
ON CONFLICT (tenant, key) DO UPDATE
SET kind = EXCLUDED.kind, queue = EXCLUDED.queue, payload = EXCLUDED.payload,
    every_seconds = EXCLUDED.every_seconds, next_run_at = EXCLUDED.next_run_at, updated_at = now()
RETURNING tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at;

-- name: ScheduleDelete
DELETE FROM skiplock_schedules WHERE tenant = @tenant AND key = @key;

-- name: ScheduleList
SELECT tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at
FROM skiplock_schedules WHERE @tenant::text IS NULL OR tenant = @tenant ORDER BY tenant, key;

-- name: ScheduleDue
SELECT tenant, key, kind, queue, payload, every_seconds, next_run_at, created_at, updated_at
FROM skiplock_schedules WHERE next_run_at <= now()
ORDER BY next_run_at LIMIT @limit FOR UPDATE SKIP LOCKED;

-- name: ScheduleAdvance
UPDATE skiplock_schedules SET next_run_at = @next_run_at, updated_at = now() WHERE tenant = @tenant AND key = @key;

-- name: Notify
SELECT pg_notify(@channel, q) FROM unnest(@payloads::text[]) AS q;

-- name: NotifyAlone
SELECT set_config('synchronous_commit', 'off', true), pg_notify(@channel, q) FROM unnest(@payloads::text[]) AS q;

-- name: JobChangedSince
(SELECT {{cols}} FROM skiplock_jobs WHERE updated_at > @since ORDER BY updated_at LIMIT @limit)
UNION ALL
(SELECT {{cols}} FROM skiplock_jobs_archive WHERE finished_at > @since ORDER BY finished_at LIMIT @limit)
ORDER BY updated_at LIMIT @limit;

-- name: JobStatsCounts
SELECT state, kind, count(*) FROM skiplock_jobs GROUP BY state, kind
UNION ALL
SELECT state, kind, count(*) FROM skiplock_jobs_archive GROUP BY state, kind;

-- name: JobStatsFinished
SELECT state, count(*) FILTER (WHERE finished_at > now() - interval '1 minute'), count(*)
FROM skiplock_jobs_archive WHERE finished_at > now() - interval '1 hour' GROUP BY state;

-- name: JobActivityFinished
SELECT floor(extract(epoch FROM finished_at - @since::timestamptz) / @bucket::float8)::int, state, count(*)
FROM skiplock_jobs_archive WHERE finished_at >= @since::timestamptz GROUP BY 1, 2;

-- name: JobActivityRunning
SELECT count(*), count(DISTINCT worker_id) FROM skiplock_jobs WHERE state = 'running';

-- name: TokenCreate
INSERT INTO skiplock_tokens (name, hash, role, tenant) VALUES (@name, @hash, @role, @tenant)
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
INSERT INTO skiplock_periodic (name, last_tick) VALUES (@name, @last_tick)
ON CONFLICT (name) DO UPDATE
SET last_tick = greatest(skiplock_periodic.last_tick, EXCLUDED.last_tick), updated_at = now();

-- name: JobSelectLive
-- Bulk actions page through their jobs by id; @after is the cursor (bigint,
-- as in JobList).
SELECT id FROM skiplock_jobs
WHERE {{JobFilter}}
  AND id > @after::bigint
ORDER BY id LIMIT @limit;

-- name: JobSelectArchived
SELECT DISTINCT id FROM skiplock_jobs_archive
WHERE {{JobFilter}}
  AND id > @after::bigint
ORDER BY id LIMIT @limit;

-- name: JobMetricsLive
SELECT queue, kind, state, count(*),
       count(*) FILTER (WHERE attempt > attempt_base AND state IN ('pending', 'scheduled')),
       coalesce((extract(epoch FROM now()) - extract(epoch FROM min(run_at) FILTER (WHERE state = 'pending')))::float8, 0)
FROM skiplock_jobs GROUP BY queue, kind, state;

-- name: JobMetricsFinished
SELECT queue, kind, state, count(*) FROM skiplock_jobs_archive
WHERE finished_at > now() - make_interval(secs => @window) GROUP BY queue, kind, state;

-- name: CounterList
SELECT name, value FROM skiplock_counters;

-- name: JobMetricsHotTable
-- The hot table with its indexes plus its spill tables with theirs, and how
-- many spill tables there are: catalog and size functions only, no table
-- is read but skiplock_hot_spill (a row per spill table). A table dropped
-- meanwhile (a rebuild's old table, a spill table taken back) counts 0.
SELECT (coalesce(pg_total_relation_size(to_regclass('skiplock_jobs')), 0)
        + coalesce((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits
                    WHERE inhparent = to_regclass('skiplock_jobs')), 0))::bigint,
       (SELECT count(*) FROM skiplock_hot_spill);

-- name: CounterAdd
INSERT INTO skiplock_counters (name, value) VALUES (@name, @value)
ON CONFLICT (name) DO UPDATE SET value = skiplock_counters.value + excluded.value;
-- Pausing running jobs, and the requests a running job's process looks for.

-- name: JobRequestPause
UPDATE skiplock_jobs SET pause_requested = true, updated_at = now()
WHERE id = @id AND state = 'running' AND NOT cancel_requested
RETURNING {{cols}};

-- name: JobPauseHeld
-- The attempt is not spent: resumed, the job runs it again from its checkpoint.
UPDATE skiplock_jobs
SET state = 'paused', attempt = attempt - 1, worker_id = NULL, lease_until = NULL, pause_requested = false,
    updated_at = now()
WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running' AND pause_requested AND NOT cancel_requested
RETURNING {{cols}};

-- name: JobRescuePaused
-- Expired leases of jobs asked to pause: paused, as if their worker had
-- stopped. The attempt is spent, as for any expired lease: the worker may
-- still be running it, and a number given again would let its late report
-- finish the next run. A job with no attempt left fails (JobRescueFinal).
UPDATE skiplock_jobs j
SET state = 'paused', worker_id = NULL, lease_until = NULL, pause_requested = false, updated_at = now(),
    errors = j.errors || jsonb_build_array(jsonb_build_object('attempt', j.attempt, 'type', 'lease_expired',
        'message', 'lease expired', 'at', now(), 'retryable', true))
WHERE j.id = ANY(ARRAY(
    SELECT id FROM skiplock_jobs
    WHERE state = 'running' AND lease_until < now() AND lease_until >= @since AND pause_requested AND NOT cancel_requested
      AND attempt <= max_retries    ORDER BY lease_until LIMIT @limit FOR UPDATE SKIP LOCKED))
RETURNING j.id;

-- name: JobStopRequests
SELECT id, cancel_requested, pause_requested FROM skiplock_jobs
WHERE id = ANY(@ids::bigint[]) AND state = 'running' AND (cancel_requested OR pause_requested);

-- The stored contract set.

-- name: ContractsPut
INSERT INTO skiplock_contracts (version, source, digest, strict, kinds, defaults)
SELECT coalesce(max(version), 0) + 1, @source, @digest, @strict, @kinds, @defaults FROM skiplock_contracts
RETURNING version, source, digest, strict, kinds, applied_at;

-- name: ContractsCurrent
SELECT version, source, digest, strict, kinds, applied_at FROM skiplock_contracts ORDER BY version DESC LIMIT 1;

-- name: JobFailHeld
-- citus_queries.sql has a copy with the queue added (CitusJobFailHeld): change both.
-- A failed attempt of a held job in one statement (see driver.FailStore):
-- h locks the job and applies outcome.Decide (cancel, then pause, then a
-- retry while retries are left); kept pauses or retries it, d and a finish
-- it, each by primary key. The entry's retryable says what was decided.
-- The last column tells whether a finished job has dependents to settle.
WITH h AS (
    SELECT id, cancel_requested, pause_requested AND NOT cancel_requested AS pause,
           @retryable::boolean AND attempt <= max_retries AS retryable,
           now() + make_interval(secs => coalesce((@waits::float8[])[array_position(@wait_kinds::text[], kind)],
               @wait::float8)) AS run_at
    FROM skiplock_jobs
    WHERE id = @id AND attempt = @attempt AND worker_id = @worker_id AND state = 'running'
    FOR UPDATE
), kept AS (
    UPDATE skiplock_jobs j
    SET state = CASE WHEN h.pause THEN 'paused' WHEN h.run_at <= now() THEN 'pending' ELSE 'scheduled' END,
        run_at = CASE WHEN h.pause THEN j.run_at ELSE h.run_at END,
        attempt = j.attempt - CASE WHEN h.pause THEN 1 ELSE 0 END,
        errors = CASE WHEN h.pause THEN j.errors ELSE j.errors || jsonb_set(@error::jsonb, ARRAY['0', 'retryable'], 'true') END,
        worker_id = NULL, lease_until = NULL, pause_requested = false, updated_at = now()
    FROM h
    WHERE j.id = h.id AND (h.pause OR (h.retryable AND NOT h.cancel_requested))
    RETURNING {{cols j:}}
), d AS (
    DELETE FROM skiplock_jobs j USING h
    WHERE j.id = h.id AND NOT h.pause AND NOT (h.retryable AND NOT h.cancel_requested)
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

-- name: JobRestoreQueue
-- Jobs from the vault go back to the queue as JobUnarchive puts an archived
-- job back: pending, waiting while a parent is live (its live parents
-- locked, as there), the attempt counting on, max_retries moved up by the
-- attempts spent since the last retry. @jobs is a JSON array of jobs whose
-- keys are the column names (driver.Job). An id the database holds, live or
-- archived, or a key a live job holds, is skipped.
WITH r AS (
    SELECT * FROM jsonb_populate_recordset(NULL::skiplock_jobs, @jobs::jsonb)
), parents AS (
    SELECT p.id FROM skiplock_jobs p WHERE p.id IN (SELECT unnest(r.depends_on) FROM r) FOR KEY SHARE
), ins AS (
    INSERT INTO skiplock_jobs ({{cols}})
    SELECT {{cols r: state=CASE WHEN r.depends_on && ARRAY(SELECT id FROM parents) THEN 'waiting' ELSE 'pending' END, op=NULLIF(r.op, ''), max_retries=r.max_retries - coalesce(r.attempt_base, 0) + r.attempt, attempt_base=r.attempt, run_at=now(), finished_at=NULL, updated_at=now(), lease_until=NULL, worker_id=NULL, cancel_requested=false, progress=0, progress_message='', idempotency_key=NULLIF(r.idempotency_key, ''), workflow_id=NULLIF(r.workflow_id, ''), stage=NULLIF(r.stage, ''), run_on_parent_failure=coalesce(r.run_on_parent_failure, false)}}
    FROM r
    WHERE NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.id = r.id)
      AND NOT EXISTS (SELECT 1 FROM skiplock_jobs_archive a WHERE a.id = r.id)
    ON CONFLICT DO NOTHING
    RETURNING id, queue, state, depends_on
), deps AS (
    INSERT INTO skiplock_job_deps (job_id, parent_id)
    SELECT ins.id, p.id FROM ins JOIN parents p ON p.id = ANY(ins.depends_on) WHERE ins.state = 'waiting'
    ON CONFLICT DO NOTHING
)
SELECT id, queue FROM ins ORDER BY id;

-- name: JobRestoreArchive
-- Jobs from the vault go back to the archive as they were; each row goes to
-- the partition of its finished_at (the default one for a day without its
-- own). An id the database holds, live or archived, is skipped.
WITH r AS (
    SELECT * FROM jsonb_populate_recordset(NULL::skiplock_jobs_archive, @jobs::jsonb)
)
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols r: op=NULLIF(r.op, ''), worker_id=NULLIF(r.worker_id, ''), idempotency_key=NULLIF(r.idempotency_key, ''), workflow_id=NULLIF(r.workflow_id, ''), stage=NULLIF(r.stage, ''), run_on_parent_failure=coalesce(r.run_on_parent_failure, false), attempt_base=coalesce(r.attempt_base, 0)}}
FROM r
WHERE r.state IN ('completed', 'failed', 'cancelled') AND r.finished_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.id = r.id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_jobs_archive a WHERE a.id = r.id)
RETURNING id;

-- name: JobRestoreSequence
-- Ids handed out after a restore stay above the ids restored (a database
-- restored into may be younger than the vault). The sequence moves only
-- when it is behind, which it is only in such a database (a sequence not
-- called yet hands out last_value next).
SELECT setval('skiplock_jobs_id_seq', @max_id::bigint)
FROM skiplock_jobs_id_seq WHERE last_value < @max_id::bigint OR (NOT is_called AND last_value = @max_id::bigint);

-- name: ProcessBeat
WITH expired AS (
    DELETE FROM skiplock_processes
    WHERE heartbeat_at < now() - make_interval(secs => @stale::float8) AND id <> @id
)
INSERT INTO skiplock_processes (id, host, pid, version, queues, started_at, heartbeat_at)
VALUES (@id, @host, @pid, @version, @queues, @started_at, now())
ON CONFLICT (id) DO UPDATE
SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version, queues = EXCLUDED.queues,
    heartbeat_at = EXCLUDED.heartbeat_at;

-- name: ProcessDelete
DELETE FROM skiplock_processes WHERE id = @id;

-- name: ProcessList
SELECT id, host, pid, version, queues, started_at, heartbeat_at
FROM skiplock_processes WHERE heartbeat_at >= now() - make_interval(secs => @stale::float8) ORDER BY id;

-- name: ReplicaLag
-- A replica that has replayed all it received is level with what it was
-- sent; otherwise its lag is the age of the last change it replayed.
SELECT pg_is_in_recovery(),
       CASE WHEN NOT pg_is_in_recovery()
                 OR pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
            ELSE COALESCE(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)
       END::float8;
