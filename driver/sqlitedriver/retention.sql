-- name: ArchiveSummary
-- The archived jobs finished before @until by UTC day, state, queue and
-- kind. Held: jobs a live job depends on, or whose window key is open at
-- @now.
SELECT (a.finished_at / 86400000000) * 86400000000 AS day, a.state, a.queue, a.kind, count(*),
       sum(a.id IN (SELECT parent_id FROM skiplock_job_deps)
           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > @now)),
       min(a.finished_at), max(a.finished_at),
       sum(120 + length(a.payload) + length(a.metadata) + length(a.errors) + length(a.tags)
           + coalesce(length(a.result), 0) + coalesce(length(a.checkpoint), 0))
FROM skiplock_jobs_archive a
WHERE a.finished_at < @until
GROUP BY 1, 2, 3, 4;

-- name: ArchiveCountLater
-- The archived jobs finished at or after @until, counted along the
-- finished_at index.
SELECT count(*) FROM skiplock_jobs_archive WHERE finished_at >= @until;

-- name: ArchiveCountBefore
-- One group of ArchiveSummary, finished in [@from, @to) and before @before.
SELECT count(*),
       coalesce(sum(a.id IN (SELECT parent_id FROM skiplock_job_deps)
           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > @now)), 0),
       coalesce(min(a.finished_at), @from), coalesce(max(a.finished_at), @from),
       coalesce(sum(120 + length(a.payload) + length(a.metadata) + length(a.errors) + length(a.tags)
           + coalesce(length(a.result), 0) + coalesce(length(a.checkpoint), 0)), 0)
FROM skiplock_jobs_archive a
WHERE a.finished_at >= @from AND a.finished_at < @to AND a.finished_at < @before
  AND a.state = @state AND a.queue = @queue AND a.kind = @kind;

-- name: ArchiveExpired
-- A page of archived jobs finished in [@from, @to) before @before, in
-- (finished_at, id) order along the finished_at index, not held at @now.
SELECT a.id, a.state, a.queue, a.kind, a.finished_at
FROM skiplock_jobs_archive a
WHERE a.finished_at >= @from AND a.finished_at < @to AND a.finished_at < @before
  AND (a.finished_at, a.id) > (@after_finished, @after_id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > @now)
ORDER BY a.finished_at, a.id
LIMIT @limit;

-- name: ArchiveJobs
SELECT {{cols}} FROM skiplock_jobs_archive WHERE id IN (SELECT value FROM json_each(@ids)) ORDER BY id;

-- name: ArchiveRange
-- A page of archived jobs finished in [@from, @to), in (finished_at, id) order
-- along the finished_at index.
SELECT {{cols}} FROM skiplock_jobs_archive
WHERE finished_at >= @from AND finished_at < @to AND (finished_at, id) > (@after_finished, @after_id)
ORDER BY finished_at, id
LIMIT @limit;

-- name: RetentionDeletable
-- The jobs named in @jobs ([id, finished_at] pairs) finished in [@from, @to)
-- that are not held at @now, each only in the version named: those
-- RetentionDelete deletes next, in the same transaction.
SELECT a.id FROM skiplock_jobs_archive AS a
WHERE a.id IN (SELECT value ->> 0 FROM json_each(@jobs)) AND a.finished_at >= @from AND a.finished_at < @to
  AND (a.id, a.finished_at) IN (SELECT value ->> 0, value ->> 1 FROM json_each(@jobs))
  AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > @now);

-- name: RetentionDelete
-- The jobs RetentionDeletable answered. No RETURNING: inside a transaction
-- a statement with RETURNING copies every page it changes to a statement
-- journal first, about a third of the purge's time.
DELETE FROM skiplock_jobs_archive WHERE id IN (SELECT value FROM json_each(@ids));

-- name: RetentionDeleteKeys
-- The expired window keys of the jobs just deleted.
DELETE FROM skiplock_unique_keys WHERE job_id IN (SELECT value FROM json_each(@ids)) AND expires_at <= @now;

-- name: RetentionDeleteDeps
-- The dependency rows of the jobs just deleted.
DELETE FROM skiplock_job_deps WHERE job_id IN (SELECT value FROM json_each(@ids));

-- name: JanitorRunSave
INSERT INTO skiplock_janitor_runs (started_at, finished_at, runner, dry_run, forced, outcome, message,
    jobs, by_state, partitions, bytes, vaulted)
VALUES (@started_at, @finished_at, @runner, @dry_run, @forced, @outcome, @message,
    @jobs, @by_state, @partitions, @bytes, @vaulted)
RETURNING id;

-- name: JanitorRunTrim
DELETE FROM skiplock_janitor_runs WHERE id <= (SELECT id FROM skiplock_janitor_runs ORDER BY id DESC LIMIT 1 OFFSET @keep);

-- name: JanitorRunList
SELECT id, started_at, finished_at, runner, dry_run, forced, outcome, message, jobs, by_state,
       partitions, bytes, vaulted
FROM skiplock_janitor_runs ORDER BY id DESC LIMIT @limit;
