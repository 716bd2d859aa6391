-- Listing filters over the archive, where finished jobs pile up: tags,
-- metadata and attempt errors by containment (GIN), the worker by B-tree,
-- created_at by BRIN (rows arrive in about created order; finished_at has
-- its BRIN already, and partitions by day). The hot table stays as it is:
-- it holds live jobs only, and every index there costs every claim.
CREATE INDEX skiplock_jobs_archive_tags ON skiplock_jobs_archive USING gin (tags);
CREATE INDEX skiplock_jobs_archive_metadata ON skiplock_jobs_archive USING gin (metadata jsonb_path_ops);
CREATE INDEX skiplock_jobs_archive_errors ON skiplock_jobs_archive USING gin (errors jsonb_path_ops);
CREATE INDEX skiplock_jobs_archive_worker ON skiplock_jobs_archive (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX skiplock_jobs_archive_created ON skiplock_jobs_archive USING brin (created_at) WITH (autosummarize = on);

-- A running job asked to pause: its worker's context ends, and the job goes
-- to paused instead of ending. Live jobs only: the archive never needs it.
ALTER TABLE skiplock_jobs ADD COLUMN pause_requested boolean NOT NULL DEFAULT false;
