-- Listing filters over the archive: the worker and created_at by index
-- (finished_at has its own). Tags, metadata and error types are JSON text
-- that SQLite cannot index; those filters read the archive newest first
-- until the page is full.
CREATE INDEX skiplock_jobs_archive_worker ON skiplock_jobs_archive (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX skiplock_jobs_archive_created ON skiplock_jobs_archive (created_at);

-- A running job asked to pause: its worker's context ends, and the job goes
-- to paused instead of ending. Live jobs only: the archive never needs it.
ALTER TABLE skiplock_jobs ADD COLUMN pause_requested INTEGER NOT NULL DEFAULT 0;
