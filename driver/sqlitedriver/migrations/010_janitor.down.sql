DROP INDEX skiplock_unique_keys_job;
DROP INDEX skiplock_jobs_archive_finished;
DROP TABLE skiplock_janitor_runs;
