-- Jobs found by idempotency key alone (an operator's search names no
-- tenant): the key leads both key indexes, so that a lookup with or without
-- the tenant is one index probe. The pairs they hold, and the live table's
-- uniqueness, are the same. Building the archive's index reads the whole
-- archive and holds its writes (completions) meanwhile: seconds a million
-- jobs.
DROP INDEX skiplock_jobs_idempotency;
CREATE UNIQUE INDEX skiplock_jobs_idempotency ON skiplock_jobs (idempotency_key, tenant) WHERE idempotency_key IS NOT NULL;
DROP INDEX skiplock_jobs_archive_key;
CREATE INDEX skiplock_jobs_archive_key ON skiplock_jobs_archive (idempotency_key, tenant) WHERE idempotency_key IS NOT NULL;
