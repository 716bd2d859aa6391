-- A manual retry keeps a job's attempt number counting; attempt_base is
-- the attempt the job had at its last retry (driver.Job.AttemptBase).
ALTER TABLE skiplock_jobs ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE skiplock_jobs_archive ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
