DROP TABLE skiplock_history_depth;
DROP TABLE skiplock_history;
