DROP TRIGGER skiplock_flow_release_delete;
DROP TRIGGER skiplock_flow_release_update;
DROP TABLE skiplock_flow_buckets;
DROP TABLE skiplock_flow_slots;
ALTER TABLE skiplock_jobs DROP COLUMN rate_key;
ALTER TABLE skiplock_jobs DROP COLUMN concurrency_key;
