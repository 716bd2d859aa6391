INSERT INTO hotproto.q (payload) SELECT '{}' FROM generate_series(1, 100);
