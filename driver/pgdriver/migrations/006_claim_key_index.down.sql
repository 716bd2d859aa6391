DROP INDEX skiplock_jobs_claim;
CREATE INDEX skiplock_jobs_claim ON skiplock_jobs (queue, priority DESC, run_at, id) WHERE state = 'pending';
