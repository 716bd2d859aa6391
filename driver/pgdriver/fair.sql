-- name: JobClaimFair
-- A claim shared between the queue's tenants (driver.FairShare). The
-- tenants with pending jobs come from a skip scan of the tenant claim
-- index: one probe per tenant, never a pass over the queue. Each tenant's
-- share is taken from its head in claim order, locked as it is read; the
-- tenants that filled their share take what the others left, after the
-- place their share ended. The jobs taken are merged in virtual time and
-- the first @max claimed; the rest are unlocked at commit.
WITH RECURSIVE tenants AS (
    (SELECT tenant FROM skiplock_jobs
     WHERE state = 'pending' AND queue = @queue
     ORDER BY tenant LIMIT 1)
    UNION ALL
    SELECT (SELECT j.tenant FROM skiplock_jobs j
            WHERE j.state = 'pending' AND j.queue = @queue AND j.tenant > t.tenant
            ORDER BY j.tenant LIMIT 1)
    FROM tenants t WHERE t.tenant IS NOT NULL
), weighed AS (
    SELECT t.tenant, coalesce((@weights::int[])[array_position(@tenants::text[], t.tenant)], 1)::float8 AS w
    FROM tenants t
    WHERE t.tenant IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
), shares AS MATERIALIZED (
    SELECT tenant, w, -ln(1 - random()) AS head, ceil(@max::int * w / sum(w) OVER ())::int AS share
    FROM weighed
), firsts AS MATERIALIZED (
    SELECT s.tenant, p.id, p.rank, p.run_at,
        row_number() OVER (PARTITION BY s.tenant ORDER BY p.rank, p.run_at, p.id) AS n
    FROM shares s CROSS JOIN LATERAL (
        SELECT id, 10 - priority AS rank, run_at FROM skiplock_jobs
        WHERE state = 'pending' AND queue = @queue AND tenant = s.tenant
          AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
        ORDER BY (10 - priority), run_at, id
        LIMIT s.share
        FOR UPDATE SKIP LOCKED) p
), room AS (
    SELECT @max::int - count(*) AS n FROM firsts
), more AS MATERIALIZED (
    SELECT f.tenant, p.id, f.n + row_number() OVER (PARTITION BY f.tenant ORDER BY p.rank, p.run_at, p.id) AS n
    FROM room r
    JOIN firsts f ON r.n > 0
    JOIN shares s ON s.tenant = f.tenant AND s.share = f.n
    CROSS JOIN LATERAL (
        SELECT id, 10 - priority AS rank, run_at FROM skiplock_jobs
        WHERE state = 'pending' AND queue = @queue AND tenant = f.tenant
          AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
          AND ((10 - priority), run_at, id) > (f.rank, f.run_at, f.id)
        ORDER BY (10 - priority), run_at, id
        LIMIT r.n
        FOR UPDATE SKIP LOCKED) p
), picked AS (
    SELECT c.id FROM (SELECT tenant, id, n FROM firsts UNION ALL SELECT tenant, id, n FROM more) c
    JOIN shares s USING (tenant)
    ORDER BY (s.head + c.n - 1) / s.w
    LIMIT @max
)
UPDATE skiplock_jobs j
SET state = 'running', attempt = j.attempt + 1, worker_id = @worker, started_at = now(), heartbeat_at = now(),
    updated_at = now(),
    lease_until = now() + make_interval(secs => coalesce((@leases::float8[])[array_position(@lease_kinds::text[], j.kind)], @default_lease::float8))
WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING {{cols j:}};
