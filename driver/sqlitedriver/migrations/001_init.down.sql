DROP TABLE IF EXISTS skiplock_schedules;
DROP TABLE IF EXISTS skiplock_leaders;
DROP TABLE IF EXISTS skiplock_queues;
DROP TABLE IF EXISTS skiplock_job_deps;
DROP TABLE IF EXISTS skiplock_unique_keys;
DROP TABLE IF EXISTS skiplock_jobs_archive;
DROP TABLE IF EXISTS skiplock_jobs;
