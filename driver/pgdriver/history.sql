-- name: HistoryAdd
-- One row per minute, queue, kind and outcome in the batch (the client
-- adds them up first, and sends them sorted: two clients adding to the
-- same rows lock them in the same order).
INSERT INTO skiplock_history AS h (minute, queue, kind, outcome, n, wait_hist, run_hist)
SELECT m, q, k, o, n, w::bigint[], r::bigint[]
FROM unnest(@minutes::timestamptz[], @queues::text[], @kinds::text[], @outcomes::text[], @ns::bigint[],
            @waits::text[], @runs::text[]) AS u(m, q, k, o, n, w, r)
ON CONFLICT (minute, queue, kind, outcome) DO UPDATE
SET n = h.n + excluded.n,
    wait_hist = ARRAY(SELECT coalesce(a, 0) + coalesce(b, 0)
                      FROM unnest(h.wait_hist, excluded.wait_hist) WITH ORDINALITY AS x(a, b, i) ORDER BY i),
    run_hist = ARRAY(SELECT coalesce(a, 0) + coalesce(b, 0)
                     FROM unnest(h.run_hist, excluded.run_hist) WITH ORDINALITY AS x(a, b, i) ORDER BY i);

-- name: HistorySampleDepth
-- The hot table with its spill tables (they inherit from it).
INSERT INTO skiplock_history_depth AS d (minute, queue, kind, pending, scheduled, running)
SELECT @minute::timestamptz, queue, kind, count(*) FILTER (WHERE state = 'pending'),
       count(*) FILTER (WHERE state = 'scheduled'), count(*) FILTER (WHERE state = 'running')
FROM skiplock_jobs WHERE state IN ('pending', 'scheduled', 'running')
GROUP BY queue, kind
ON CONFLICT (minute, queue, kind) DO UPDATE
SET pending = excluded.pending, scheduled = excluded.scheduled, running = excluded.running;

-- name: HistoryReadCounts
SELECT floor(extract(epoch FROM minute - @since::timestamptz) / @bucket::float8)::int AS b, outcome, sum(n)::bigint
FROM skiplock_history
WHERE minute >= @since::timestamptz AND minute < @until::timestamptz
  AND (@queue::text = '' OR queue = @queue::text) AND (@kind::text = '' OR kind = @kind::text)
GROUP BY 1, 2 ORDER BY 1, 2;

-- name: HistoryReadTiming
-- Each bucket's histograms added up element by element (i counts from 1).
SELECT floor(extract(epoch FROM h.minute - @since::timestamptz) / @bucket::float8)::int AS b, x.i::int,
       sum(x.w)::bigint, sum(x.r)::bigint
FROM skiplock_history h, unnest(h.wait_hist, h.run_hist) WITH ORDINALITY AS x(w, r, i)
WHERE h.minute >= @since::timestamptz AND h.minute < @until::timestamptz
  AND (@queue::text = '' OR h.queue = @queue::text) AND (@kind::text = '' OR h.kind = @kind::text)
GROUP BY 1, 2 HAVING sum(x.w) > 0 OR sum(x.r) > 0 ORDER BY 1, 2;

-- name: HistoryReadDepth
SELECT floor(extract(epoch FROM minute - @since::timestamptz) / @bucket::float8)::int AS b,
       max(p)::bigint, max(s)::bigint, max(r)::bigint
FROM (SELECT minute, sum(pending) AS p, sum(scheduled) AS s, sum(running) AS r
      FROM skiplock_history_depth
      WHERE minute >= @since::timestamptz AND minute < @until::timestamptz
        AND (@queue::text = '' OR queue = @queue::text) AND (@kind::text = '' OR kind = @kind::text)
      GROUP BY minute) AS per_minute
GROUP BY 1 ORDER BY 1;

-- name: HistoryPrune
WITH gone AS (
    DELETE FROM skiplock_history WHERE minute < @before::timestamptz RETURNING 1
), gone_depth AS (
    DELETE FROM skiplock_history_depth WHERE minute < @before::timestamptz RETURNING 1
)
SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM gone_depth);
