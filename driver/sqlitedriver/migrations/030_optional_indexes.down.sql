CREATE INDEX IF NOT EXISTS skiplock_jobs_claim_tenant ON skiplock_jobs (queue, tenant, priority DESC, run_at, id) WHERE state = 'pending';
