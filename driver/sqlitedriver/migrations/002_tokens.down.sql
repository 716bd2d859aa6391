DROP INDEX IF EXISTS skiplock_jobs_archive_finished;
DROP TABLE IF EXISTS skiplock_tokens;
