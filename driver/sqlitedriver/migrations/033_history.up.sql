-- The history the dashboard's charts and GET /v1/stats/history read: per
-- minute, queue, kind and outcome, the attempts that ended and histograms
-- of their wait (run_at to start) and run time (HistoryBuckets buckets,
-- driver/history.go). Clients add what their attempts did every few
-- seconds; nothing rewrites a row, so a job retried later leaves the
-- minutes it ran in as they were. The janitor deletes rows past
-- Retention.History. Minutes are microseconds since the epoch; the
-- histograms JSON arrays of counts.
CREATE TABLE skiplock_history (
    minute    INTEGER NOT NULL,
    queue     TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    outcome   TEXT    NOT NULL,
    n         INTEGER NOT NULL,
    wait_hist TEXT    NOT NULL,
    run_hist  TEXT    NOT NULL,
    PRIMARY KEY (minute, queue, kind, outcome)
);

-- The live jobs of each queue and kind, sampled once a minute by the leader.
CREATE TABLE skiplock_history_depth (
    minute    INTEGER NOT NULL,
    queue     TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    pending   INTEGER NOT NULL,
    scheduled INTEGER NOT NULL,
    running   INTEGER NOT NULL,
    PRIMARY KEY (minute, queue, kind)
);
