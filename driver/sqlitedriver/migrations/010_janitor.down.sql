DROP INDEX skiplock_unique_keys_job;
DROP TABLE skiplock_janitor_runs;
