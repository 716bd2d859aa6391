-- Cluster-wide counters that metrics read (rescues by outcome), so every
-- server reports the same totals whichever process did the work.
CREATE TABLE skiplock_counters (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL DEFAULT 0
);
