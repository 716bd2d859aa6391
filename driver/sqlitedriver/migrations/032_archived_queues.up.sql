-- A queue whose every job finished is listed from its settings row: the
-- queue recorder adds the queues of recently finished jobs, and this step
-- adds those of the jobs archived before it (one read of the archive).
-- Times are microseconds since the epoch.
INSERT INTO skiplock_queues (name, paused, created_at, updated_at)
SELECT DISTINCT queue, 0, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER),
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
FROM skiplock_jobs_archive WHERE true
ON CONFLICT (name) DO NOTHING;
