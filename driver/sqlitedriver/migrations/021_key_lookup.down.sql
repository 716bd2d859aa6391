DROP INDEX skiplock_jobs_archive_key;
CREATE INDEX skiplock_jobs_archive_key ON skiplock_jobs_archive (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
DROP INDEX skiplock_jobs_idempotency;
CREATE UNIQUE INDEX skiplock_jobs_idempotency ON skiplock_jobs (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
