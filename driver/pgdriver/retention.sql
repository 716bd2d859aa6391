-- name: ArchiveSummary
-- The archive by UTC day, state, queue and kind. Held: jobs a live job
-- depends on, or whose window key is open at $1 (hashed subplans, one pass).
SELECT date_trunc('day', a.finished_at, 'UTC'), a.state, a.queue, a.kind, count(*),
       count(*) FILTER (WHERE a.id IN (SELECT parent_id FROM skiplock_job_deps)
                           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > $1)),
       min(a.finished_at), max(a.finished_at),
       sum(200 + pg_column_size(a.payload) + pg_column_size(a.metadata) + pg_column_size(a.errors)
           + coalesce(pg_column_size(a.result), 0) + coalesce(pg_column_size(a.checkpoint), 0))::bigint
FROM skiplock_jobs_archive a
GROUP BY 1, 2, 3, 4;

-- name: ArchiveCountBefore
-- One group of ArchiveSummary, finished in [$1, $5) and before $6.
SELECT count(*),
       count(*) FILTER (WHERE a.id IN (SELECT parent_id FROM skiplock_job_deps)
                           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > $7)),
       coalesce(min(a.finished_at), $1), coalesce(max(a.finished_at), $1),
       coalesce(sum(200 + pg_column_size(a.payload) + pg_column_size(a.metadata) + pg_column_size(a.errors)
           + coalesce(pg_column_size(a.result), 0) + coalesce(pg_column_size(a.checkpoint), 0)), 0)::bigint
FROM skiplock_jobs_archive a
WHERE a.finished_at >= $1 AND a.finished_at < $5 AND a.finished_at < $6
  AND a.state = $2 AND a.queue = $3 AND a.kind = $4;

-- name: ArchivePartitions
-- Day partitions of the archive in this schema, attached or left detached
-- by a drop that did not finish.
SELECT c.relname, pg_total_relation_size(c.oid), NOT c.relispartition
FROM pg_class c
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'skiplock_jobs_archive'::regclass)
  AND c.relkind = 'r' AND c.relname ~ '^skiplock_jobs_archive_[0-9]{8}$'
ORDER BY c.relname;

-- name: ArchiveExpired
-- A page of archived jobs finished in [$1, $2) before $3, by id (each day
-- partition has an index on id), not held at $4.
SELECT a.id, a.state, a.queue, a.kind, a.finished_at
FROM skiplock_jobs_archive a
WHERE a.finished_at >= $1 AND a.finished_at < $2 AND a.finished_at < $3 AND a.id > $5
  AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > $4)
ORDER BY a.id
LIMIT $6;

-- name: ArchiveJobs
SELECT {{cols}} FROM skiplock_jobs_archive WHERE id = ANY($1::bigint[]) ORDER BY id;

-- name: RetentionDelete
-- Deletes the jobs among $1 finished in [$2, $3) that are not held at $4,
-- with their expired window keys and their dependency rows.
WITH gone AS (
    DELETE FROM skiplock_jobs_archive a
    WHERE a.id = ANY($1::bigint[]) AND a.finished_at >= $2 AND a.finished_at < $3
      AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
      AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > $4)
    RETURNING a.id
), keys AS (
    DELETE FROM skiplock_unique_keys WHERE job_id IN (SELECT id FROM gone) AND expires_at <= $4
), deps AS (
    DELETE FROM skiplock_job_deps WHERE job_id IN (SELECT id FROM gone)
)
SELECT id FROM gone ORDER BY id;

-- name: JanitorRunSave
INSERT INTO skiplock_janitor_runs (started_at, finished_at, runner, dry_run, forced, outcome, message,
    jobs, by_state, partitions, bytes, vaulted)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
RETURNING id;

-- name: JanitorRunTrim
DELETE FROM skiplock_janitor_runs WHERE id <= (SELECT id FROM skiplock_janitor_runs ORDER BY id DESC OFFSET $1 LIMIT 1);

-- name: JanitorRunList
SELECT id, started_at, finished_at, runner, dry_run, forced, outcome, message, jobs, by_state,
       partitions, bytes, vaulted
FROM skiplock_janitor_runs ORDER BY id DESC LIMIT $1;
