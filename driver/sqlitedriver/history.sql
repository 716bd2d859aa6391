-- name: HistoryAdd
-- @rows is a JSON array of {m, q, k, o, n, w, r}, one per minute, queue,
-- kind and outcome; a histogram adds to the stored one key by key (both
-- are HistoryBuckets long).
INSERT INTO skiplock_history AS h (minute, queue, kind, outcome, n, wait_hist, run_hist)
SELECT json_extract(value, '$.m'), json_extract(value, '$.q'), json_extract(value, '$.k'),
       json_extract(value, '$.o'), json_extract(value, '$.n'), json_extract(value, '$.w'), json_extract(value, '$.r')
FROM json_each(@rows) WHERE true
ON CONFLICT (minute, queue, kind, outcome) DO UPDATE
SET n = h.n + excluded.n,
    wait_hist = (SELECT json_group_array(v) FROM (
        SELECT a.value + b.value AS v FROM json_each(h.wait_hist) a JOIN json_each(excluded.wait_hist) b ON b.key = a.key
        ORDER BY a.key)),
    run_hist = (SELECT json_group_array(v) FROM (
        SELECT a.value + b.value AS v FROM json_each(h.run_hist) a JOIN json_each(excluded.run_hist) b ON b.key = a.key
        ORDER BY a.key));

-- name: HistorySampleDepth
INSERT INTO skiplock_history_depth (minute, queue, kind, pending, scheduled, running)
SELECT @minute, queue, kind, sum(state = 'pending'), sum(state = 'scheduled'), sum(state = 'running')
FROM skiplock_jobs WHERE state IN ('pending', 'scheduled', 'running')
GROUP BY queue, kind
ON CONFLICT (minute, queue, kind) DO UPDATE
SET pending = excluded.pending, scheduled = excluded.scheduled, running = excluded.running;

-- name: HistoryReadCounts
SELECT (minute - @since) / @bucket AS b, outcome, sum(n)
FROM skiplock_history
WHERE minute >= @since AND minute < @until AND (@queue = '' OR queue = @queue) AND (@kind = '' OR kind = @kind)
GROUP BY 1, 2 ORDER BY 1, 2;

-- name: HistoryReadTiming
-- Each bucket's histograms added up key by key (keys count from 0).
SELECT (h.minute - @since) / @bucket AS b, w.key, sum(w.value), sum(r.value)
FROM skiplock_history h JOIN json_each(h.wait_hist) w JOIN json_each(h.run_hist) r ON r.key = w.key
WHERE h.minute >= @since AND h.minute < @until AND (@queue = '' OR h.queue = @queue) AND (@kind = '' OR h.kind = @kind)
GROUP BY 1, 2 HAVING sum(w.value) > 0 OR sum(r.value) > 0 ORDER BY 1, 2;

-- name: HistoryReadDepth
SELECT (minute - @since) / @bucket AS b, max(p), max(s), max(r)
FROM (SELECT minute, sum(pending) AS p, sum(scheduled) AS s, sum(running) AS r
      FROM skiplock_history_depth
      WHERE minute >= @since AND minute < @until AND (@queue = '' OR queue = @queue) AND (@kind = '' OR kind = @kind)
      GROUP BY minute)
GROUP BY 1 ORDER BY 1;

-- name: HistoryPrune
DELETE FROM skiplock_history WHERE minute < @before;

-- name: HistoryPruneDepth
DELETE FROM skiplock_history_depth WHERE minute < @before;
