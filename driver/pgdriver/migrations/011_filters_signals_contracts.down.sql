ALTER TABLE skiplock_jobs DROP COLUMN pause_requested;
DROP INDEX skiplock_jobs_archive_created;
DROP INDEX skiplock_jobs_archive_worker;
DROP INDEX skiplock_jobs_archive_errors;
DROP INDEX skiplock_jobs_archive_metadata;
DROP INDEX skiplock_jobs_archive_tags;
