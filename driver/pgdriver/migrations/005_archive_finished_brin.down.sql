DROP INDEX skiplock_jobs_archive_finished;
CREATE INDEX skiplock_jobs_archive_finished ON skiplock_jobs_archive (finished_at);
