-- name: FlowCandidates
-- Pending jobs in claim order whose keys have room: a free slot of the
-- concurrency key, a token of the rate key (docs/flow-control.md).
SELECT id, coalesce(concurrency_key, ''), coalesce(rate_key, '') FROM skiplock_jobs j
WHERE state = 'pending' AND queue = +@queue
  AND (@kinds_any OR kind IN (SELECT value FROM json_each(@kinds)))
  AND (@tenant IS NULL OR tenant = @tenant)
  AND (10 - priority, run_at, id) > (@after_rank, @after_run_at, @after_id)
  AND NOT EXISTS (SELECT 1 FROM skiplock_queues q WHERE q.name = @queue AND q.paused)
  AND (concurrency_key IS NULL
       OR EXISTS (SELECT 1 FROM skiplock_flow_slots s WHERE s.key = j.concurrency_key AND s.slot > 0 AND s.job_id IS NULL))
  AND (rate_key IS NULL
       OR EXISTS (SELECT 1 FROM skiplock_flow_buckets b WHERE b.key = j.rate_key
                  AND min(b.burst, b.tokens + b.rate * max(0, @now - b.refilled_at) / 1e6) >= 1))
ORDER BY priority DESC, run_at, id
LIMIT @scan;

-- name: FlowFreeSlots
-- A key's first free slots, as many as the claim has jobs of it.
SELECT slot FROM skiplock_flow_slots WHERE key = @key AND slot > 0 AND job_id IS NULL ORDER BY slot LIMIT @n;

-- name: FlowTokens
SELECT key, min(burst, tokens + rate * max(0, @now - refilled_at) / 1e6) FROM skiplock_flow_buckets
WHERE key IN (SELECT value FROM json_each(@keys));

-- name: FlowTake
UPDATE skiplock_flow_slots SET job_id = c.value ->> 'id', taken_at = @now
FROM json_each(@batch) AS c
WHERE skiplock_flow_slots.key = c.value ->> 'key' AND skiplock_flow_slots.slot = c.value ->> 'slot';

-- name: FlowSpend
UPDATE skiplock_flow_buckets
SET tokens = min(burst, tokens + rate * max(0, @now - refilled_at) / 1e6) - (c.value ->> 'n'),
    refilled_at = max(refilled_at, @now)
FROM json_each(@batch) AS c
WHERE skiplock_flow_buckets.key = c.value ->> 'key';

-- name: JobClaimIDs
-- JobClaim's update, for jobs the flow claim picked.
UPDATE skiplock_jobs
SET state = 'running', attempt = attempt + 1, worker_id = @worker, started_at = @now, heartbeat_at = @now,
    updated_at = @now,
    lease_until = @now + coalesce((SELECT l.value FROM json_each(@leases) l WHERE l.key = skiplock_jobs.kind), @default_lease)
WHERE id IN (SELECT value FROM json_each(@ids)) AND state = 'pending'
RETURNING {{cols}};

-- name: FlowTag
-- Sets the flow keys of jobs just inserted, in the insert's transaction.
UPDATE skiplock_jobs SET concurrency_key = nullif(c.value ->> 'ck', ''), rate_key = nullif(c.value ->> 'rk', '')
FROM json_each(@batch) AS c
WHERE skiplock_jobs.id = c.value ->> 'id';

-- name: FlowSlotsTrim
-- A limit lowered removes the free slots above it and retires the held
-- ones (a negative number, which no claim takes) until their jobs let go.
-- Each is a range of the key's index: a probe when empty.
DELETE FROM skiplock_flow_slots WHERE key = @key AND slot > @n AND job_id IS NULL;

-- name: FlowSlotsTrimRetired
DELETE FROM skiplock_flow_slots WHERE key = @key AND slot < 0 AND job_id IS NULL;

-- name: FlowSlotsRetire
UPDATE skiplock_flow_slots SET slot = -slot WHERE key = @key AND slot > @n AND job_id IS NOT NULL;

-- name: FlowSlotsEnsure
-- A key whose last slot exists is passed over at the cost of one probe.
WITH RECURSIVE s(slot) AS (SELECT 1 WHERE NOT EXISTS (
        SELECT 1 FROM skiplock_flow_slots f WHERE f.key = @key AND f.slot = @n)
    UNION ALL SELECT slot + 1 FROM s WHERE slot < @n)
INSERT OR IGNORE INTO skiplock_flow_slots (key, slot) SELECT @key, slot FROM s;

-- name: FlowBucketsEnsure
INSERT INTO skiplock_flow_buckets (key, rate, burst, tokens, refilled_at)
SELECT value ->> 'key', value ->> 'rate', value ->> 'burst', value ->> 'burst', @now FROM json_each(@batch) WHERE true
ON CONFLICT (key) DO UPDATE SET rate = excluded.rate, burst = excluded.burst, tokens = min(tokens, excluded.burst)
WHERE rate <> excluded.rate OR burst <> excluded.burst;

-- name: FlowUsage
SELECT key, count(job_id), count(*), 0.0, 0.0, 0.0, 0 FROM skiplock_flow_slots GROUP BY key
UNION ALL
SELECT key, 0, 0, min(burst, tokens + rate * max(0, @now - refilled_at) / 1e6), burst, rate, 1
FROM skiplock_flow_buckets;

-- name: FlowSweepNext
-- The first @limit keys after @after, in order, that have slots or a
-- bucket: a skip scan of the slots' key index, one probe per key however
-- many slots it has.
WITH RECURSIVE s(key) AS (
    SELECT (SELECT key FROM skiplock_flow_slots WHERE key > @after ORDER BY key LIMIT 1)
    UNION ALL
    SELECT (SELECT f.key FROM skiplock_flow_slots f WHERE f.key > s.key ORDER BY f.key LIMIT 1)
    FROM s WHERE s.key IS NOT NULL
    LIMIT @limit + 1
)
SELECT key FROM (
    SELECT key FROM s WHERE key IS NOT NULL
    UNION
    SELECT key FROM (SELECT key FROM skiplock_flow_buckets WHERE key > @after ORDER BY key LIMIT @limit)
)
ORDER BY key LIMIT @limit;

-- name: FlowSweepIdle
-- The keys of @keys that are idle: no slot is held, the bucket is full, no
-- job started at or after @before (µs), and no live job carries the key
-- (by the key indexes).
SELECT k.value FROM json_each(@keys) AS k
WHERE NOT EXISTS (SELECT 1 FROM skiplock_flow_slots s
                  WHERE s.key = k.value AND (s.job_id IS NOT NULL OR s.taken_at >= @before))
  AND NOT EXISTS (SELECT 1 FROM skiplock_flow_buckets b
                  WHERE b.key = k.value AND (b.refilled_at >= @before
                        OR b.tokens + b.rate * max(0, @now - b.refilled_at) / 1e6 < b.burst))
  AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.concurrency_key = k.value)
  AND NOT EXISTS (SELECT 1 FROM skiplock_jobs j WHERE j.rate_key = k.value)
ORDER BY k.value;

-- name: FlowSweepDropSlots
DELETE FROM skiplock_flow_slots WHERE key IN (SELECT value FROM json_each(@keys));

-- name: FlowSweepDropBuckets
DELETE FROM skiplock_flow_buckets WHERE key IN (SELECT value FROM json_each(@keys));
