UPDATE hotproto.q SET state = 1, locked_at = now()
 WHERE id IN (SELECT id FROM hotproto.q WHERE state = 0 ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED);
