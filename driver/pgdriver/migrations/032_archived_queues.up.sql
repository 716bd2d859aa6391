-- A queue whose every job finished is listed from its settings row: the
-- queue recorder adds the queues of recently finished jobs, and this step
-- adds those of the jobs archived before it (one read of the archive).
INSERT INTO skiplock_queues (name)
SELECT DISTINCT queue FROM skiplock_jobs_archive
ON CONFLICT (name) DO NOTHING;
