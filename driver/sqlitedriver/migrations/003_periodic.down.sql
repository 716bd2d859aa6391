DROP TABLE IF EXISTS skiplock_periodic;
