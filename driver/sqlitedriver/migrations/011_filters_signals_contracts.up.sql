-- Listing filters over the archive: the worker and created_at by index
-- (finished_at has its own). Tags, metadata and error types are JSON text
-- that SQLite cannot index; those filters read the archive newest first
-- until the page is full.
CREATE INDEX skiplock_jobs_archive_worker ON skiplock_jobs_archive (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX skiplock_jobs_archive_created ON skiplock_jobs_archive (created_at);
