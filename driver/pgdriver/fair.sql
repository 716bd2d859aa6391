-- name: JobClaimFair
-- A claim shared between the queue's tenants (driver.FairShare), in one
-- statement. heads is a skip scan of the tenant claim index: one probe per
-- tenant answers its first pending job, never a pass over the queue. Each
-- tenant's share is taken from that job on in claim order, locked as it is
-- read, so that the index entries of jobs claimed before (which PostgreSQL
-- keeps until vacuum) are walked once, by the probe. The tenants that
-- filled their share take what the others left, after the place their
-- share ended. The jobs taken are merged in virtual time and the first
-- @max claimed; the rest are unlocked at commit. No step joins two sets:
-- the claim's settings rule out hash and merge joins, and a nested loop
-- over a thousand jobs and a hundred tenants would cost more than the
-- claim, so each row carries its tenant's share, head and weight.
WITH RECURSIVE heads AS (
    (SELECT tenant, 10 - priority AS rank, run_at, id FROM skiplock_jobs
     WHERE state = 'pending' AND queue = @queue
     ORDER BY tenant, (10 - priority), run_at, id LIMIT 1)
    UNION ALL
    SELECT n.* FROM heads h CROSS JOIN LATERAL (
        SELECT tenant, 10 - priority AS rank, run_at, id FROM skiplock_jobs
        WHERE state = 'pending' AND queue = @queue AND tenant > h.tenant
        ORDER BY tenant, (10 - priority), run_at, id LIMIT 1) n
), weighed AS (
    SELECT h.*, coalesce((@weights::int[])[array_position(@tenants::text[], h.tenant)], 1)::float8 AS w
    FROM heads h
    WHERE NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
), shares AS MATERIALIZED (
    SELECT tenant, rank, run_at, id, w, -ln(1 - random()) AS head, ceil(@max::int * w / sum(w) OVER ())::int AS share
    FROM weighed
), firsts AS MATERIALIZED (
    SELECT s.tenant, s.share, s.head, s.w, p.id, p.rank, p.run_at,
        row_number() OVER (PARTITION BY s.tenant ORDER BY p.rank, p.run_at, p.id) AS n
    FROM shares s CROSS JOIN LATERAL (
        SELECT id, 10 - priority AS rank, run_at FROM skiplock_jobs
        WHERE state = 'pending' AND queue = @queue AND tenant = s.tenant
          AND ((10 - priority), run_at, id) >= (s.rank, s.run_at, s.id)
          AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
        ORDER BY (10 - priority), run_at, id
        LIMIT s.share
        FOR UPDATE SKIP LOCKED) p
), room AS MATERIALIZED (
    SELECT @max::int - count(*) AS n FROM firsts
), more AS MATERIALIZED (
    SELECT f.head, f.w, p.id, f.n + row_number() OVER (PARTITION BY f.tenant ORDER BY p.rank, p.run_at, p.id) AS n
    FROM room r
    JOIN firsts f ON r.n > 0 AND f.n = f.share
    CROSS JOIN LATERAL (
        SELECT id, 10 - priority AS rank, run_at FROM skiplock_jobs
        WHERE state = 'pending' AND queue = @queue AND tenant = f.tenant
          AND ((10 - priority), run_at, id) > (f.rank, f.run_at, f.id)
          AND (cardinality(@kinds::text[]) = 0 OR kind = ANY(@kinds::text[]))
        ORDER BY (10 - priority), run_at, id
        LIMIT r.n
        FOR UPDATE SKIP LOCKED) p
), picked AS (
    SELECT c.id FROM (SELECT id, n, head, w FROM firsts UNION ALL SELECT id, n, head, w FROM more) c
    ORDER BY (c.head + c.n - 1) / c.w
    LIMIT @max
)
UPDATE skiplock_jobs j
SET state = 'running', attempt = j.attempt + 1, worker_id = @worker_id, started_at = now(), heartbeat_at = now(),
    updated_at = now(),
    lease_until = now() + make_interval(secs => coalesce((@leases::float8[])[array_position(@lease_kinds::text[], j.kind)], @default_lease::float8))
WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
RETURNING {{cols j:}};
