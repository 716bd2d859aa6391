DROP TABLE skiplock_processes;
