DROP TRIGGER skiplock_flow_release_delete ON skiplock_jobs;
DROP TRIGGER skiplock_flow_release_update ON skiplock_jobs;
DROP FUNCTION skiplock_flow_release();
DROP TABLE skiplock_flow_buckets;
DROP TABLE skiplock_flow_slots;
ALTER TABLE skiplock_jobs DROP COLUMN concurrency_key, DROP COLUMN rate_key;
