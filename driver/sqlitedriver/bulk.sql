-- fragment: Chunk
-- What a chunk of a bulk action (driver.Chunk) asks of its jobs beside the
-- action's own states, checked again as the statement acts: the filter's
-- states (a JSON array; NULL: any), and a finish before @finished_before
-- (NULL: any).
(@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
    AND (@finished_before IS NULL OR finished_at < @finished_before)

-- name: JobRequestCancelMany
-- The set-based forms of the single actions (bulk.go): each single
-- action's statement on a chunk of ids, a JSON array.
UPDATE skiplock_jobs SET cancel_requested = 1, updated_at = @now
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'running' AND {{Chunk}}
RETURNING {{cols}};

-- name: JobArchiveLiveMany
INSERT INTO skiplock_jobs_archive ({{cols}})
SELECT {{cols j: state='cancelled', finished_at=@now, updated_at=@now}}
FROM skiplock_jobs j
WHERE j.id IN (SELECT value FROM json_each(@ids)) AND j.state IN ('pending', 'scheduled', 'waiting', 'paused') AND {{Chunk}}
RETURNING {{cols}};

-- name: JobPauseMany
UPDATE skiplock_jobs SET state = 'paused', updated_at = @now
WHERE id IN (SELECT value FROM json_each(@ids)) AND state IN ('pending', 'scheduled', 'waiting') AND {{Chunk}}
RETURNING {{cols}};

-- name: JobRequestPauseMany
UPDATE skiplock_jobs SET pause_requested = 1, updated_at = @now
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'running' AND NOT cancel_requested AND {{Chunk}}
RETURNING {{cols}};

-- name: JobResumeMany
UPDATE skiplock_jobs
SET state = CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.job_id = skiplock_jobs.id) THEN 'waiting'
                 WHEN run_at > @now THEN 'scheduled' ELSE 'pending' END,
    updated_at = @now
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'paused' AND {{Chunk}}
RETURNING {{cols}};

-- name: JobUnarchiveMany
-- A job whose idempotency key a live job holds stays in the archive, as
-- JobRetry refuses it; two jobs of the chunk sharing a key make the
-- statement fail, and the chunk is taken one job at a time.
INSERT INTO skiplock_jobs ({{cols}})
SELECT {{cols a: state=CASE WHEN EXISTS (SELECT 1 FROM skiplock_job_deps dep WHERE dep.job_id = a.id) THEN 'waiting' ELSE 'pending' END, max_retries=a.max_retries - a.attempt_base + a.attempt, attempt_base=a.attempt, run_at=@now, finished_at=NULL, updated_at=@now, lease_until=NULL, worker_id=NULL, started_at=NULL, heartbeat_at=NULL, cancel_requested=0, progress=0, progress_message=''}}
FROM skiplock_jobs_archive a
WHERE a.id IN (SELECT value FROM json_each(@ids)) AND a.state IN ('failed', 'cancelled') AND {{Chunk}}
  AND (a.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM skiplock_jobs l
       WHERE l.idempotency_key = a.idempotency_key AND l.tenant = a.tenant))
RETURNING {{cols}};

-- name: ArchiveDeleteMany
DELETE FROM skiplock_jobs_archive WHERE id IN (SELECT value FROM json_each(@ids));

-- name: JobDeleteArchived
DELETE FROM skiplock_jobs_archive
WHERE id IN (SELECT value FROM json_each(@ids)) AND state IN ('completed', 'failed', 'cancelled') AND {{Chunk}}
RETURNING id;
