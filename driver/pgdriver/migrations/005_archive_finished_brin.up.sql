-- Every finished job is one archive row, and a B-tree on finished_at cost an
-- index insert apiece. Rows arrive in finished_at order, which a BRIN index
-- summarises in a few pages at almost no cost per insert; the event feed and
-- the throughput statistics read recent ranges, which it still narrows to.
DROP INDEX skiplock_jobs_archive_finished;
CREATE INDEX skiplock_jobs_archive_finished ON skiplock_jobs_archive USING brin (finished_at) WITH (autosummarize = on);
