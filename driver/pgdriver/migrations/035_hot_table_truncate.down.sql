-- Back to migration 024's rebuild: copy the live jobs to a new table, drop
-- the old one and give the new one its name and what made it what it was.
CREATE OR REPLACE FUNCTION skiplock_hot_table_rebuild(max_rows bigint, lock_wait_ms integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    nsp     text := current_schema();
    old     oid;
    owner   oid;
    opts    text[];
    moved   bigint;
    stmts   text[];
    s       text;
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass(format('%I.skiplock_jobs', nsp))), 'USAGE') THEN
        RETURN -3;
    END IF;
    PERFORM set_config('lock_timeout', lock_wait_ms || 'ms', true);
    BEGIN
        EXECUTE format('LOCK TABLE %I.skiplock_jobs IN ACCESS EXCLUSIVE MODE', nsp);
    EXCEPTION WHEN lock_not_available THEN
        RETURN -1;
    END;
    -- The table as it is once locked: another rebuild may have replaced it
    -- while this one waited.
    old := to_regclass(format('%I.skiplock_jobs', nsp));
    SELECT c.relowner, c.reloptions INTO owner, opts FROM pg_class c WHERE c.oid = old;
    IF NOT pg_has_role(owner, 'USAGE') THEN
        RETURN -3;
    END IF;
    -- What a copy would not carry over: row security, rules, column grants.
    IF (SELECT relrowsecurity FROM pg_class WHERE oid = old)
       OR EXISTS (SELECT FROM pg_policy WHERE polrelid = old)
       OR EXISTS (SELECT FROM pg_rewrite WHERE ev_class = old)
       OR EXISTS (SELECT FROM pg_attribute WHERE attrelid = old AND attacl IS NOT NULL) THEN
        RETURN -4;
    END IF;

    -- What makes the table what it is, read before it goes: the
    -- constraints that own an index, the other indexes, the triggers, the
    -- grants other than the owner's and the publications.
    SELECT coalesce(array_agg(format('ALTER TABLE %I.skiplock_jobs ADD CONSTRAINT %I %s', nsp, k.conname,
                                     pg_get_constraintdef(k.oid)) ORDER BY k.contype, k.conname), '{}')
      INTO stmts FROM pg_constraint k WHERE k.conrelid = old AND k.contype IN ('p', 'u', 'x');
    stmts := stmts || ARRAY(SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                             WHERE i.indrelid = old
                               AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = old)
                             ORDER BY c.relname);
    stmts := stmts || ARRAY(SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t
                             WHERE t.tgrelid = old AND NOT t.tgisinternal ORDER BY t.tgname);
    stmts := stmts || ARRAY(SELECT format('GRANT %s ON %I.skiplock_jobs TO %s%s', a.privilege_type, nsp,
                                          CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                                          CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                             FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = old AND a.grantee <> owner);
    stmts := stmts || ARRAY(SELECT format('ALTER PUBLICATION %I ADD TABLE %I.skiplock_jobs', p.pubname, nsp)
                             FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = old);
    stmts := stmts || ARRAY(SELECT format('COMMENT ON TABLE %I.skiplock_jobs IS %L', nsp, d.description)
                             FROM pg_description d WHERE d.objoid = old AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0);
    stmts := stmts || ARRAY(SELECT format('ALTER TABLE %I.skiplock_jobs REPLICA IDENTITY %s', nsp,
                                          CASE c.relreplident WHEN 'f' THEN 'FULL' WHEN 'n' THEN 'NOTHING'
                                               ELSE format('USING INDEX %I', (SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                                                                               WHERE x.indrelid = old AND x.indisreplident)) END)
                             FROM pg_class c WHERE c.oid = old AND c.relreplident <> 'd');
    IF opts IS NOT NULL THEN
        stmts := stmts || format('ALTER TABLE %I.skiplock_jobs SET (%s)', nsp, array_to_string(opts, ', '));
    END IF;
    IF owner <> (SELECT oid FROM pg_roles WHERE rolname = current_user) THEN
        stmts := stmts || format('ALTER TABLE %I.skiplock_jobs OWNER TO %I', nsp, pg_get_userbyid(owner));
    END IF;

    IF NOT EXISTS (SELECT FROM pg_index WHERE indrelid = old AND indisprimary) THEN
        RAISE EXCEPTION 'skiplock_jobs has no primary key: not rebuilt';
    END IF;
    EXECUTE format('CREATE TABLE %I.skiplock_jobs_rebuild (LIKE %I.skiplock_jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS
                    INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS INCLUDING STATISTICS)', nsp, nsp);
    -- Through the primary key: after a vacuum, its pages hold the live jobs
    -- only, where the heap may be mostly empty pages.
    PERFORM set_config('enable_seqscan', 'off', true);
    EXECUTE format('INSERT INTO %I.skiplock_jobs_rebuild SELECT * FROM %I.skiplock_jobs ORDER BY id', nsp, nsp);
    GET DIAGNOSTICS moved = ROW_COUNT;
    IF moved > max_rows THEN
        RAISE EXCEPTION USING ERRCODE = 'SLK02', MESSAGE = 'too many live jobs to rebuild the hot table';
    END IF;
    EXECUTE format('DROP TABLE %I.skiplock_jobs', nsp);
    EXECUTE format('ALTER TABLE %I.skiplock_jobs_rebuild RENAME TO skiplock_jobs', nsp);
    FOREACH s IN ARRAY stmts LOOP
        EXECUTE s;
    END LOOP;
    RETURN moved;
EXCEPTION
    WHEN SQLSTATE 'SLK02' THEN
        RETURN -2;
    WHEN dependent_objects_still_exist THEN -- a view or a function over the table
        RETURN -5;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION skiplock_hot_table_rebuild(bigint, integer) SET search_path = %I, pg_temp', current_schema());
END $$;
