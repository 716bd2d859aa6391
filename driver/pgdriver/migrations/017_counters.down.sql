DROP TABLE skiplock_counters;
