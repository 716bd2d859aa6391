DROP FUNCTION skiplock_enqueue(text, jsonb, jsonb);
DROP FUNCTION skiplock_enqueue_refs(jsonb, text, text, text, text, jsonb);
DROP FUNCTION skiplock_enqueue_int(jsonb, text, integer, integer);
DROP FUNCTION skiplock_enqueue_text(jsonb, text, integer);
DROP FUNCTION skiplock_enqueue_json(text, jsonb);
DROP FUNCTION skiplock_enqueue_refuse(text, text);
ALTER TABLE skiplock_contracts DROP COLUMN defaults;
