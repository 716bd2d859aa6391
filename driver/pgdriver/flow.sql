-- name: JobClaimFlow
-- JobClaim honouring flow keys (docs/flow-control.md). A pending job whose
-- concurrency key had no free slot, or whose rate key had no token, when
-- the statement began (statement_timestamp(), not the transaction's start)
-- is skipped, not locked. Of the jobs it locks, a job takes a free slot of
-- its concurrency key (FOR UPDATE SKIP LOCKED: a slot is never shared) and
-- a token of its rate key (the bucket row locked, its tokens read and
-- spent in its newest version, refilled up to the claim's clock); a job
-- that gets neither stays pending with its attempt unspent. @scan bounds
-- the jobs read.
WITH cand AS (
    SELECT j.id, j.concurrency_key AS ck, j.rate_key AS rk, (10 - j.priority) AS r, j.run_at
    FROM skiplock_jobs j
    WHERE j.state = 'pending' AND j.queue = @queue
      AND (cardinality(@kinds::text[]) = 0 OR j.kind = ANY(@kinds::text[]))
      AND (@tenant::text IS NULL OR j.tenant = @tenant)
      AND ((10 - j.priority), j.run_at, j.id) > (@after_rank::int, @after_run_at::timestamptz, @after_id::bigint)
      AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
      -- OFFSET 0: a probe of the key per job, never a hash of every free slot.
      AND (j.concurrency_key IS NULL
           OR EXISTS (SELECT 1 FROM skiplock_flow_slots s WHERE s.key = j.concurrency_key AND s.slot > 0 AND s.job_id IS NULL
                      OFFSET 0))
      AND (j.rate_key IS NULL
           OR EXISTS (SELECT 1 FROM skiplock_flow_buckets b WHERE b.key = j.rate_key
                      AND least(b.burst, b.tokens + b.rate * greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at))) >= 1
                      OFFSET 0))
    ORDER BY (10 - j.priority), j.run_at, j.id
    LIMIT @scan
), ranked AS (
    SELECT c.*, row_number() OVER (PARTITION BY c.ck ORDER BY c.r, c.run_at, c.id) AS nc,
           row_number() OVER (PARTITION BY c.rk ORDER BY c.r, c.run_at, c.id) AS nr
    FROM cand c
), room AS (
    -- The room of each key met, read once: free slots (counted up to the
    -- number of its jobs met) and tokens.
    SELECT k.key, k.rated,
           CASE WHEN k.rated
                THEN (SELECT least(b.burst, b.tokens + b.rate * greatest(0, extract(epoch FROM statement_timestamp() - b.refilled_at)))
                      FROM skiplock_flow_buckets b WHERE b.key = k.key)
                ELSE (SELECT count(*) FROM (SELECT 1 FROM skiplock_flow_slots s
                                            WHERE s.key = k.key AND s.slot > 0 AND s.job_id IS NULL LIMIT k.wanted) f)
           END AS n
    FROM (SELECT ck AS key, false AS rated, count(*) AS wanted FROM cand WHERE ck IS NOT NULL GROUP BY ck
          UNION ALL
          SELECT rk, true, count(*) FROM cand WHERE rk IS NOT NULL GROUP BY rk) k
), rooms AS MATERIALIZED (
    -- As arrays, looked up by position: a join's plan, made not knowing
    -- the sizes, ran a nested loop over both lists.
    SELECT array_agg(key) FILTER (WHERE NOT rated) AS ckeys, array_agg(n) FILTER (WHERE NOT rated) AS cn,
           array_agg(key) FILTER (WHERE rated) AS rkeys, array_agg(n) FILTER (WHERE rated) AS rn
    FROM room
), trimmed AS (
    -- Only as many jobs of a key as it had room for: the others would be
    -- locked and let go.
    SELECT x.id FROM ranked x, rooms m
    WHERE (x.ck IS NULL OR x.nc <= m.cn[array_position(m.ckeys, x.ck)])
      AND (x.rk IS NULL OR x.nr <= m.rn[array_position(m.rkeys, x.rk)])
    ORDER BY x.r, x.run_at, x.id
    LIMIT @max
), locked AS (
    SELECT j.id, j.concurrency_key AS ck, j.rate_key AS rk, (10 - j.priority) AS r, j.run_at
    FROM skiplock_jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM trimmed)) AND j.state = 'pending'
    FOR UPDATE SKIP LOCKED
), wanted AS (
    -- Each key's locked jobs in claim order, as an array: its free slots
    -- are handed to them in turn without a join.
    SELECT ck, array_agg(id ORDER BY r, run_at, id) AS ids, count(*) AS n
    FROM locked WHERE ck IS NOT NULL GROUP BY ck
), slots AS (
    SELECT f.key, f.slot, w.ids[row_number() OVER (PARTITION BY w.ck ORDER BY f.slot)] AS job_id
    FROM wanted w
    CROSS JOIN LATERAL (
        SELECT s.key, s.slot FROM skiplock_flow_slots s WHERE s.key = w.ck AND s.slot > 0 AND s.job_id IS NULL
        ORDER BY s.slot LIMIT w.n FOR UPDATE SKIP LOCKED) f
), slotted AS (
    SELECT l.id, l.rk, l.r, l.run_at FROM locked l
    WHERE l.ck IS NULL OR l.id = ANY(ARRAY(SELECT job_id FROM slots))
), buckets AS (
    SELECT b.key, b.tokens, b.rate, b.burst, b.refilled_at
    FROM skiplock_flow_buckets b
    WHERE b.key = ANY(ARRAY(SELECT DISTINCT rk FROM slotted WHERE rk IS NOT NULL))
    FOR UPDATE SKIP LOCKED
), clock AS MATERIALIZED (
    -- The claim's one time, read once every slot and bucket it takes is
    -- locked (counting the buckets reads them all): the buckets refill up
    -- to it and the jobs start at it, so that the jobs' started_at prove
    -- the rate (the transaction's now() may be long past) and follow the
    -- finish of the job that last held a slot.
    SELECT clock_timestamp() AS t FROM (SELECT count(*) FROM buckets) held
), chosen AS (
    SELECT x.id, x.rk
    FROM (SELECT s.*, row_number() OVER (PARTITION BY s.rk ORDER BY s.r, s.run_at, s.id) AS n FROM slotted s) x
    LEFT JOIN buckets b ON b.key = x.rk
    CROSS JOIN clock c
    WHERE x.rk IS NULL
       OR x.n <= floor(least(b.burst, b.tokens + b.rate * greatest(0, extract(epoch FROM c.t - b.refilled_at))))
), take AS (
    UPDATE skiplock_flow_slots s SET job_id = t.job_id, taken_at = now()
    FROM (SELECT key, slot, job_id FROM slots WHERE job_id = ANY(ARRAY(SELECT id FROM chosen))) t
    WHERE s.key = t.key AND s.slot = t.slot
    RETURNING s.slot
), spend AS (
    UPDATE skiplock_flow_buckets b
    SET tokens = least(b.burst, b.tokens + b.rate * greatest(0, extract(epoch FROM c.t - b.refilled_at))) - n.n,
        refilled_at = greatest(b.refilled_at, c.t)
    FROM (SELECT rk, count(*) AS n FROM chosen WHERE rk IS NOT NULL GROUP BY rk) n, clock c
    WHERE b.key = n.rk
    RETURNING b.key
)
UPDATE skiplock_jobs j
SET state = 'running', attempt = j.attempt + 1, worker_id = @worker_id, started_at = (SELECT t FROM clock), heartbeat_at = now(),
    updated_at = now(),
    lease_until = now() + make_interval(secs => coalesce((@leases::float8[])[array_position(@lease_kinds::text[], j.kind)], @default_lease::float8))
WHERE j.id = ANY(ARRAY(SELECT id FROM chosen))
RETURNING {{cols j:}};

-- name: FlowTag
-- Sets the flow keys of jobs just inserted, in the insert's transaction.
UPDATE skiplock_jobs j SET concurrency_key = nullif(t.ck, ''), rate_key = nullif(t.rk, '')
FROM unnest(@ids::bigint[], @concurrency_keys::text[], @rate_keys::text[]) AS t(id, ck, rk)
WHERE j.id = t.id;

-- name: FlowSlotsEnsure
-- Gives each concurrency key of @keys its @slots. DO NOTHING: an existing slot
-- is not locked, so that inserts never hold up a claim; a key whose last
-- slot exists is passed over at the cost of one probe. A limit lowered
-- removes the free slots above it and retires the held ones (a negative
-- number, which no claim takes) until their jobs let go of them.
WITH k AS (SELECT * FROM unnest(@keys::text[], @slots::int[]) AS k(key, n)), gone AS (
    -- Two ranges of the key's index, each a probe when empty.
    DELETE FROM skiplock_flow_slots s USING k WHERE s.key = k.key AND s.slot > k.n AND s.job_id IS NULL
), gone_retired AS (
    DELETE FROM skiplock_flow_slots s USING k WHERE s.key = k.key AND s.slot < 0 AND s.job_id IS NULL
), retired AS (
    UPDATE skiplock_flow_slots s SET slot = -s.slot FROM k
    WHERE s.key = k.key AND s.slot > k.n AND s.job_id IS NOT NULL
)
INSERT INTO skiplock_flow_slots (key, slot)
SELECT k.key, g FROM k, generate_series(1, k.n) AS g
WHERE NOT EXISTS (SELECT 1 FROM skiplock_flow_slots s WHERE s.key = k.key AND s.slot = k.n)
ON CONFLICT DO NOTHING;

-- name: FlowBucketsEnsure
-- Gives each rate key of @keys its bucket, full; a changed rate or burst is
-- written without taking the lock of an unchanged bucket.
WITH k AS (SELECT * FROM unnest(@keys::text[], @rates::float8[], @bursts::float8[]) AS k(key, rate, burst)), changed AS (
    UPDATE skiplock_flow_buckets b SET rate = k.rate, burst = k.burst, tokens = least(b.tokens, k.burst)
    FROM k WHERE b.key = k.key AND (b.rate <> k.rate OR b.burst <> k.burst)
)
INSERT INTO skiplock_flow_buckets (key, rate, burst, tokens)
SELECT k.key, k.rate, k.burst, k.burst FROM k
ON CONFLICT DO NOTHING;

-- name: FlowUsage
SELECT key, count(job_id)::int, count(*)::int, 0::float8, 0::float8, 0::float8, false, now()
FROM skiplock_flow_slots GROUP BY key
UNION ALL
SELECT key, 0, 0, least(burst, tokens + rate * greatest(0, extract(epoch FROM now() - refilled_at)))::float8,
       burst, rate, true, now()
FROM skiplock_flow_buckets;

-- name: FlowKeysLock
-- An insert's shared lock on each of its flow keys (@keys, in order), held
-- until it commits, taken before it makes their slots and buckets and in a
-- statement of its own: the statements after it see a sweep that dropped
-- a key while this waited, and make the key again. A sweep takes the same
-- locks exclusive and passes over a key it cannot have (FlowSweepIdle), so
-- it never drops a key whose job is inserted but not yet committed. The
-- two-key form, first key hashtext('skiplock_flow'): apart from the
-- one-key locks taken elsewhere (migrations, archive partitions).
SELECT pg_advisory_xact_lock_shared(hashtext('skiplock_flow'), hashtext(k.key)) FROM unnest(@keys::text[]) AS k(key);

-- name: FlowSweepNext
-- The first @limit keys after @after, in order, that have slots or a
-- bucket: a skip scan of the slots' key index, one probe per key however
-- many slots it has.
WITH RECURSIVE s(key) AS (
    (SELECT key FROM skiplock_flow_slots WHERE key > @after::text ORDER BY key LIMIT 1)
    UNION ALL
    SELECT (SELECT f.key FROM skiplock_flow_slots f WHERE f.key > s.key ORDER BY f.key LIMIT 1)
    FROM s WHERE s.key IS NOT NULL
)
SELECT key FROM (
    (SELECT key FROM s WHERE key IS NOT NULL LIMIT @limit::bigint)
    UNION
    (SELECT key FROM skiplock_flow_buckets WHERE key > @after::text ORDER BY key LIMIT @limit::bigint)
) k
ORDER BY key LIMIT @limit::bigint;

-- name: FlowSweepIdle
-- The keys of @keys that are idle, each locked (FlowKeysLock) until the
-- transaction ends; a key an insert holds is passed over. Idle: no slot is
-- held, the bucket is full, no job started at or after @before, and no
-- live job carries the key (the hot table and its spill tables, by their
-- key indexes). The locks are taken once the keys are found idle, and this
-- statement's view is older than its locks: run it again once they are
-- held to see the keys as they are.
WITH idle AS MATERIALIZED (
    SELECT k.key FROM unnest(@keys::text[]) AS k(key)
    WHERE NOT EXISTS (SELECT 1 FROM skiplock_flow_slots s
                      WHERE s.key = k.key AND (s.job_id IS NOT NULL OR s.taken_at >= @before))
      AND NOT EXISTS (SELECT 1 FROM skiplock_flow_buckets b
                      WHERE b.key = k.key AND (b.refilled_at >= @before
                            OR b.tokens + b.rate * greatest(0, extract(epoch FROM now() - b.refilled_at)) < b.burst))
      AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.concurrency_key = k.key)
      AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.rate_key = k.key)
)
SELECT key FROM idle
WHERE pg_try_advisory_xact_lock(hashtext('skiplock_flow'), hashtext(key))
ORDER BY key;

-- name: FlowSweepDrop
-- Drops the slots and buckets of @keys, found idle while locked: no job
-- can take them meanwhile.
WITH slots AS (
    DELETE FROM skiplock_flow_slots WHERE key = ANY(@keys::text[])
)
DELETE FROM skiplock_flow_buckets WHERE key = ANY(@keys::text[]);
