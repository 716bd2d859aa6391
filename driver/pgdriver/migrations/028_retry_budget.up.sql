-- A manual retry keeps a job's attempt number counting, so that a worker
-- whose lease ran out before the job failed, and that still reports its
-- run, never matches a run after the retry. attempt_base is the attempt
-- the job had at its last retry: the retry moves max_retries up by the
-- attempts spent since the one before (driver.Job.AttemptBase). Spill
-- tables, children of the hot table, and the archive's partitions take
-- the column from their parents.
ALTER TABLE skiplock_jobs ADD COLUMN attempt_base integer NOT NULL DEFAULT 0;
ALTER TABLE skiplock_jobs_archive ADD COLUMN attempt_base integer NOT NULL DEFAULT 0;
