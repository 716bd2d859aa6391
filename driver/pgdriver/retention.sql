-- name: ArchiveSummary
-- The archived jobs finished before @until by UTC day, state, queue and
-- kind; the partitions that start at @until or later are pruned when the
-- statement starts, unread. Held: jobs a live job depends on, or whose
-- window key is open at @now (hashed subplans, one pass).
SELECT date_trunc('day', a.finished_at, 'UTC'), a.state, a.queue, a.kind, count(*),
       count(*) FILTER (WHERE a.id IN (SELECT parent_id FROM skiplock_job_deps)
                           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > @now)),
       min(a.finished_at), max(a.finished_at),
       sum(200 + pg_column_size(a.payload) + pg_column_size(a.metadata) + pg_column_size(a.errors)
           + coalesce(pg_column_size(a.result), 0) + coalesce(pg_column_size(a.checkpoint), 0))::bigint
FROM skiplock_jobs_archive a
WHERE a.finished_at < @until
GROUP BY 1, 2, 3, 4;

-- name: ArchiveAttached
-- The archive's attached partitions with the planner's figures: rows and
-- pages at the last vacuum or analyze (rows -1: never), and pages now (0 for
-- a partition dropped since the catalog was read).
SELECT c.relname, c.reltuples::float8, c.relpages::bigint,
       coalesce(pg_relation_size(c.oid), 0) / current_setting('block_size')::bigint
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'skiplock_jobs_archive'::regclass;

-- name: ArchiveCountBefore
-- One group of ArchiveSummary, finished in [@day, @day_end) and before @before.
SELECT count(*),
       count(*) FILTER (WHERE a.id IN (SELECT parent_id FROM skiplock_job_deps)
                           OR a.id IN (SELECT job_id FROM skiplock_unique_keys WHERE expires_at > @now)),
       coalesce(min(a.finished_at), @day), coalesce(max(a.finished_at), @day),
       coalesce(sum(200 + pg_column_size(a.payload) + pg_column_size(a.metadata) + pg_column_size(a.errors)
           + coalesce(pg_column_size(a.result), 0) + coalesce(pg_column_size(a.checkpoint), 0)), 0)::bigint
FROM skiplock_jobs_archive a
WHERE a.finished_at >= @day AND a.finished_at < @day_end AND a.finished_at < @before
  AND a.state = @state AND a.queue = @queue AND a.kind = @kind;

-- name: ArchivePartitions
-- Day and month partitions of the archive in this schema, attached or left
-- detached by a drop that did not finish.
SELECT c.relname, pg_total_relation_size(c.oid), NOT c.relispartition
FROM pg_class c
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'skiplock_jobs_archive'::regclass)
  AND c.relkind = 'r' AND c.relname ~ '^skiplock_jobs_archive_([0-9]{8}|[0-9]{6})$'
ORDER BY c.relname;

-- name: ArchiveExpired
-- A page of archived jobs finished in [@from, @to) before @before, by id (each day
-- partition has an index on id), not held at @now.
SELECT a.id, a.state, a.queue, a.kind, a.finished_at
FROM skiplock_jobs_archive a
WHERE a.finished_at >= @from AND a.finished_at < @to AND a.finished_at < @before AND a.id > @after
  AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > @now)
ORDER BY a.id
LIMIT @limit;

-- name: ArchiveJobs
SELECT {{cols}} FROM skiplock_jobs_archive WHERE id = ANY(@ids::bigint[]) ORDER BY id;

-- name: ArchiveRange
-- A page of archived jobs finished in [@from, @to) by id: the partitions the range
-- spans, each read along its id index, merged.
SELECT {{cols}} FROM skiplock_jobs_archive
WHERE finished_at >= @from AND finished_at < @to AND id > @after
ORDER BY id
LIMIT @limit;

-- name: RetentionDelete
-- Deletes the jobs among @ids finished in [@from, @to) that are not held at @now,
-- each only in the version named (finished at the same place of @finished), with
-- their expired window keys and their dependency rows.
WITH gone AS (
    DELETE FROM skiplock_jobs_archive a
    WHERE a.id = ANY(@ids::bigint[]) AND a.finished_at >= @from AND a.finished_at < @to
      AND (a.id, a.finished_at) IN (SELECT * FROM unnest(@ids::bigint[], @finished::timestamptz[]))
      AND NOT EXISTS (SELECT 1 FROM skiplock_job_deps d WHERE d.parent_id = a.id)
      AND NOT EXISTS (SELECT 1 FROM skiplock_unique_keys u WHERE u.job_id = a.id AND u.expires_at > @now)
    RETURNING a.id
), keys AS (
    DELETE FROM skiplock_unique_keys WHERE job_id IN (SELECT id FROM gone) AND expires_at <= @now
), deps AS (
    DELETE FROM skiplock_job_deps WHERE job_id IN (SELECT id FROM gone)
)
SELECT id FROM gone ORDER BY id;

-- name: JanitorRunSave
INSERT INTO skiplock_janitor_runs (started_at, finished_at, runner, dry_run, forced, outcome, message,
    jobs, by_state, partitions, bytes, vaulted)
VALUES (@started_at, @finished_at, @runner, @dry_run, @forced, @outcome, @message, @jobs, @by_state, @partitions, @bytes, @vaulted)
RETURNING id;

-- name: JanitorRunTrim
DELETE FROM skiplock_janitor_runs WHERE id <= (SELECT id FROM skiplock_janitor_runs ORDER BY id DESC OFFSET @keep LIMIT 1);

-- name: JanitorRunList
SELECT id, started_at, finished_at, runner, dry_run, forced, outcome, message, jobs, by_state,
       partitions, bytes, vaulted
FROM skiplock_janitor_runs ORDER BY id DESC LIMIT @limit;
