-- The tenant claim index serves fair claims only (Config.Fairness), and
-- every insert paid an entry in it: a client configured with fairness
-- makes it when it starts (driver.FairIndexer).
DROP INDEX IF EXISTS skiplock_jobs_claim_tenant;
