-- fragment: Chunk
-- What a chunk of a bulk action (driver.Chunk) asks of its jobs beside the
-- action's own states, checked again as the statement acts: the filter's
-- states (none: any), and a finish before @finished_before (NULL: any).
(cardinality(@states::text[]) = 0 OR state = ANY(@states::text[]))
    AND (@finished_before::timestamptz IS NULL OR finished_at < @finished_before::timestamptz)

-- name: JobCancelMany
-- The set-based actions (bulk.go) run the single action's statements on a
-- chunk of ids, in one statement: here JobRequestCancel on the running
-- jobs and JobArchiveLive on the others. The scan by the primary key
-- takes the ids in order, so that two chunks lock their jobs in the same
-- order.
WITH r AS (
    UPDATE skiplock_jobs SET cancel_requested = true, updated_at = now()
    WHERE id = ANY(@ids::bigint[]) AND state = 'running' AND {{Chunk}}
    RETURNING {{cols}}
), d AS (
    DELETE FROM skiplock_jobs WHERE id = ANY(@ids::bigint[]) AND state IN ('pending', 'scheduled', 'waiting', 'paused') AND {{Chunk}}
    RETURNING *
), a AS (
    INSERT INTO skiplock_jobs_archive ({{cols}})
    SELECT {{cols d: state='cancelled', finished_at=now(), updated_at=now()}}
    FROM d
    RETURNING {{cols}}
)
SELECT * FROM a UNION ALL SELECT * FROM r;

-- name: JobPauseMany
-- JobPause on the jobs not running yet, JobRequestPause on the running ones.
WITH p AS (
    UPDATE skiplock_jobs SET state = 'paused', updated_at = now()
    WHERE id = ANY(@ids::bigint[]) AND state IN ('pending', 'scheduled', 'waiting') AND {{Chunk}}
    RETURNING {{cols}}
), r AS (
    UPDATE skiplock_jobs SET pause_requested = true, updated_at = now()
    WHERE id = ANY(@ids::bigint[]) AND state = 'running' AND NOT cancel_requested AND {{Chunk}}
    RETURNING {{cols}}
)
SELECT * FROM p UNION ALL SELECT * FROM r;

-- name: JobResumeMany
-- JobResume, on a chunk.
UPDATE skiplock_jobs j
SET state = CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = j.id) THEN 'waiting'
                 WHEN j.run_at > now() THEN 'scheduled' ELSE 'pending' END,
    updated_at = now()
WHERE j.id = ANY(@ids::bigint[]) AND j.state = 'paused' AND {{Chunk}}
RETURNING {{cols}};

-- name: JobUnarchiveMany
-- JobUnarchive, on a chunk: each job's live parents are locked, and a job
-- with one waits. A job whose idempotency key a live job holds stays in the
-- archive, as JobRetry refuses it; two jobs of the chunk sharing a key
-- make the statement fail, and the caller takes the chunk one job at a time.
WITH parents AS (
    SELECT dep.job_id AS child FROM skiplock_jobs p JOIN skiplock_job_deps dep ON dep.parent_id = p.id
    WHERE dep.job_id = ANY(@ids::bigint[])
    FOR KEY SHARE OF p
), d AS (
    DELETE FROM skiplock_jobs_archive a WHERE a.id = ANY(@ids::bigint[]) AND a.state IN ('failed', 'cancelled') AND {{Chunk}}
      AND (a.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM skiplock_jobs l
           WHERE l.idempotency_key = a.idempotency_key AND l.tenant = a.tenant))
    RETURNING *
)
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols d: state=CASE WHEN EXISTS (SELECT 1 FROM parents p WHERE p.child = d.id) THEN 'waiting' ELSE 'pending' END, max_retries=d.max_retries - d.attempt_base + d.attempt, attempt_base=d.attempt, run_at=now(), finished_at=NULL, updated_at=now(), lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=false, progress=0, progress_message=''}}
FROM d
RETURNING {{cols}};

-- name: JobDeleteArchived
DELETE FROM skiplock_jobs_archive
WHERE id = ANY(@ids::bigint[]) AND state IN ('completed', 'failed', 'cancelled') AND {{Chunk}}
RETURNING id;
