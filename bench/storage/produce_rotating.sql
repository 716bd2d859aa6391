INSERT INTO hotproto.q (slot, payload) SELECT (SELECT slot FROM hotproto.cur), '{}' FROM generate_series(1, 100);
