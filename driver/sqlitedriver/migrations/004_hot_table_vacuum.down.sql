-- SQLite needs no vacuum settings: its hot table reuses free pages.
SELECT 1;
