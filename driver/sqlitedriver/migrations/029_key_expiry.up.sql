-- The key pruner finds expired window keys by this index, a range of the
-- oldest, instead of reading every key each run.
CREATE INDEX skiplock_unique_keys_expires ON skiplock_unique_keys (expires_at);
