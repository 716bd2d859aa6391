-- A claim may start after a place in claim order (where the producer's last
-- claim ended) so that it does not walk again the index entries of the jobs
-- it claimed: PostgreSQL keeps them until vacuum, and a long transaction
-- elsewhere holds vacuum off. A row comparison bounds an index scan only
-- when its columns sort the same way, so the priority is ranked ascending.
DROP INDEX skiplock_jobs_claim;
CREATE INDEX skiplock_jobs_claim ON skiplock_jobs (queue, (10 - priority), run_at, id) WHERE state = 'pending';
