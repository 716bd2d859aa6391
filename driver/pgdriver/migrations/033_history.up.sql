-- The history the dashboard's charts and GET /v1/stats/history read: per
-- minute, queue, kind and outcome, the attempts that ended and histograms
-- of their wait (run_at to start) and run time (HistoryBuckets buckets,
-- driver/history.go). Clients add what their attempts did every few
-- seconds; nothing rewrites a row, so a job retried later leaves the
-- minutes it ran in as they were. The janitor deletes rows past
-- Retention.History.
CREATE TABLE skiplock_history (
    minute    timestamptz NOT NULL,
    queue     text        NOT NULL,
    kind      text        NOT NULL,
    outcome   text        NOT NULL,
    n         bigint      NOT NULL,
    wait_hist bigint[]    NOT NULL,
    run_hist  bigint[]    NOT NULL,
    PRIMARY KEY (minute, queue, kind, outcome)
);

-- The live jobs of each queue and kind, sampled once a minute by the leader.
CREATE TABLE skiplock_history_depth (
    minute    timestamptz NOT NULL,
    queue     text        NOT NULL,
    kind      text        NOT NULL,
    pending   bigint      NOT NULL,
    scheduled bigint      NOT NULL,
    running   bigint      NOT NULL,
    PRIMARY KEY (minute, queue, kind)
);
