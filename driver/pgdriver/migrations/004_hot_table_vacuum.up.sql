-- The hot table churns: every job is inserted, updated when claimed and
-- deleted when it finishes. Vacuum it by a fixed count of dead rows, without
-- throttling, instead of by a fraction of a table that stays small.
ALTER TABLE skiplock_jobs SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);
