ALTER TABLE skiplock_jobs_archive DROP COLUMN attempt_base;
ALTER TABLE skiplock_jobs DROP COLUMN attempt_base;
