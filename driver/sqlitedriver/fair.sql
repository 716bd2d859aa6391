-- name: JobClaimFairTenants
-- The tenants with pending jobs in the queue, by a skip scan of the tenant
-- claim index: one probe per tenant, never a pass over the queue. None
-- while the queue is paused.
WITH RECURSIVE tenants(tenant) AS (
    SELECT (SELECT tenant FROM skiplock_jobs WHERE state = 'pending' AND queue = +@queue ORDER BY tenant LIMIT 1)
    UNION ALL
    SELECT (SELECT j.tenant FROM skiplock_jobs j
            WHERE j.state = 'pending' AND j.queue = +@queue AND j.tenant > t.tenant ORDER BY j.tenant LIMIT 1)
    FROM tenants t WHERE t.tenant IS NOT NULL
)
SELECT tenant FROM tenants
WHERE tenant IS NOT NULL AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused);

-- name: JobClaimFairHead
-- Up to @max pending jobs of one tenant in claim order, after a place.
SELECT id, 10 - priority, run_at FROM skiplock_jobs
WHERE state = 'pending' AND queue = +@queue AND tenant = @tenant
  AND (@kinds_any OR kind IN (SELECT value FROM json_each(@kinds)))
  AND (10 - priority, run_at, id) > (@after_rank, @after_run_at, @after_id)
ORDER BY priority DESC, run_at, id
LIMIT @max;

-- name: JobClaimFairTake
-- The jobs a fair claim picked, claimed as JobClaim claims.
UPDATE skiplock_jobs
SET state = 'running', attempt = attempt + 1, worker_id = @worker, started_at = @now, heartbeat_at = @now,
    updated_at = @now,
    lease_until = @now + coalesce((SELECT l.value FROM json_each(@leases) l WHERE l.key = skiplock_jobs.kind), @default_lease)
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'pending'
RETURNING {{cols}};
