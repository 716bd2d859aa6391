DROP FUNCTION skiplock_hot_table_rebuild(bigint, integer);
