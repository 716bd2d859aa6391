CREATE INDEX IF NOT EXISTS skiplock_jobs_archive_tags ON skiplock_jobs_archive USING gin (tags);
CREATE INDEX IF NOT EXISTS skiplock_jobs_archive_metadata ON skiplock_jobs_archive USING gin (metadata jsonb_path_ops);
CREATE INDEX IF NOT EXISTS skiplock_jobs_archive_errors ON skiplock_jobs_archive USING gin (errors jsonb_path_ops);
CREATE INDEX IF NOT EXISTS skiplock_jobs_archive_worker ON skiplock_jobs_archive (worker_id) WHERE worker_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS skiplock_jobs_archive_created ON skiplock_jobs_archive USING brin (created_at) WITH (autosummarize = on);
CREATE INDEX IF NOT EXISTS skiplock_jobs_claim_tenant ON skiplock_jobs (queue, tenant, (10 - priority), run_at, id) WHERE state = 'pending';
