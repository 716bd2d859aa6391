-- The archive's listing-filter indexes (tags, metadata and errors by GIN,
-- the worker by B-tree, created_at by BRIN) cost every completion an entry
-- in each, whether anyone filters or not. They become optional: `skiplock
-- migrate filter-indexes` adds them, partition by partition without
-- blocking completions (docs/jobs.md), and the filters read them once they
-- are there.
DROP INDEX IF EXISTS skiplock_jobs_archive_tags;
DROP INDEX IF EXISTS skiplock_jobs_archive_metadata;
DROP INDEX IF EXISTS skiplock_jobs_archive_errors;
DROP INDEX IF EXISTS skiplock_jobs_archive_worker;
DROP INDEX IF EXISTS skiplock_jobs_archive_created;

-- The tenant claim index serves fair claims only (Config.Fairness), and
-- every insert paid an entry in it: a client configured with fairness
-- makes it when it starts (driver.FairIndexer), concurrently.
DROP INDEX IF EXISTS skiplock_jobs_claim_tenant;
