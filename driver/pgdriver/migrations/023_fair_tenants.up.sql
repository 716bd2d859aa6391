-- Fair claims (driver.ClaimParams.Fair) find the tenants with pending jobs
-- in a queue by skipping from one tenant to the next in this index, then
-- take each tenant's head in claim order from it: no claim sorts the queue.
CREATE INDEX skiplock_jobs_claim_tenant ON skiplock_jobs (queue, tenant, (10 - priority), run_at, id) WHERE state = 'pending';
