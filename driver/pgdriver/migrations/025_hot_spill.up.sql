-- Spill tables: a transaction held open elsewhere that has read or written
-- the hot table holds a lock on it, and no rebuild can pass that lock; every
-- job inserted and finished while it stays open leaves a row behind that
-- neither vacuum nor a rebuild can remove. While such a transaction lasts,
-- new jobs go to a spill table instead: a child of the hot table (table
-- inheritance), so every claim, heartbeat, completion and list that reads
-- skiplock_jobs reads its spill tables too. The holder has no lock on a
-- table made after it began: a spill table that has drained is emptied
-- (TRUNCATE gives its files back, whatever snapshots are open) and takes
-- new jobs again. Once the holder has ended, the spill tables' jobs go back
-- to the hot table and the spill tables are dropped.
CREATE TABLE skiplock_hot_spill (
    name      text PRIMARY KEY,
    -- target: the spill table new plain jobs go to (at most one: the
    -- leader sets it, for all rows in one statement).
    target    boolean NOT NULL DEFAULT false,
    opened_at timestamptz NOT NULL DEFAULT now()
);
CREATE SEQUENCE skiplock_hot_spill_seq;

-- skiplock_hot_spill_open makes a spill table shaped like the hot table
-- (columns, defaults, constraints, indexes, triggers, storage parameters,
-- grants, publications, replica identity, owner), makes it a child of the hot table, and makes it the
-- target. It answers the new table's name, '' if it could not have the hot
-- table's lock within lock_wait_ms (nothing made), or NULL if the calling
-- role does not own the hot table or the hot table has what a spill table
-- would not carry over (row security, rules, column grants).
CREATE FUNCTION skiplock_hot_spill_open(lock_wait_ms integer)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    nsp    text := current_schema();
    parent oid := to_regclass(format('%I.skiplock_jobs', nsp));
    owner  oid;
    opts   text[];
    child  text;
    s      text;
BEGIN
    SELECT c.relowner, c.reloptions INTO owner, opts FROM pg_class c WHERE c.oid = parent;
    IF NOT pg_has_role(owner, 'USAGE') THEN
        RETURN NULL;
    END IF;
    IF (SELECT relrowsecurity FROM pg_class WHERE oid = parent)
       OR EXISTS (SELECT FROM pg_rewrite WHERE ev_class = parent)
       OR EXISTS (SELECT FROM pg_attribute WHERE attrelid = parent AND attacl IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('lock_timeout', lock_wait_ms || 'ms', true);
    child := 'skiplock_jobs_spill_' || nextval(format('%I.skiplock_hot_spill_seq', nsp));
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.skiplock_jobs INCLUDING ALL)', nsp, child, nsp);
    IF opts IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %I.%I SET (%s)', nsp, child, array_to_string(opts, ', '));
    END IF;
    FOR s IN SELECT regexp_replace(pg_get_triggerdef(t.oid), ' ON \S+ ', format(' ON %I.%I ', nsp, child))
               FROM pg_trigger t WHERE t.tgrelid = parent AND NOT t.tgisinternal ORDER BY t.tgname LOOP
        EXECUTE s;
    END LOOP;
    FOR s IN SELECT format('GRANT %s ON %I.%I TO %s%s', a.privilege_type, nsp, child,
                           CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                           CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
               FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = parent AND a.grantee <> owner LOOP
        EXECUTE s;
    END LOOP;
    FOR s IN SELECT format('ALTER PUBLICATION %I ADD TABLE %I.%I', p.pubname, nsp, child)
               FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid WHERE r.prrelid = parent LOOP
        EXECUTE s;
    END LOOP;
    IF (SELECT relreplident FROM pg_class WHERE oid = parent) IN ('f', 'n') THEN
        EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY %s', nsp, child,
                       CASE (SELECT relreplident FROM pg_class WHERE oid = parent) WHEN 'f' THEN 'FULL' ELSE 'NOTHING' END);
    END IF;
    IF owner <> (SELECT oid FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('ALTER TABLE %I.%I OWNER TO %I', nsp, child, pg_get_userbyid(owner));
    END IF;
    -- A share update exclusive lock on the hot table: neither a reader's
    -- nor a writer's lock stands in its way, but a rebuild's queued request
    -- does, for as long as it waits.
    EXECUTE format('ALTER TABLE %I.%I INHERIT %I.skiplock_jobs', nsp, child, nsp);
    INSERT INTO skiplock_hot_spill (name, target) VALUES (child, false);
    UPDATE skiplock_hot_spill SET target = (name = child);
    RETURN child;
EXCEPTION WHEN lock_not_available THEN
    RETURN ''; -- nothing made
END $$;

-- skiplock_hot_spill_empty moves the live jobs of spill table `spill` into
-- the target (another spill table) or, with no target, into the hot table
-- itself; then it truncates the spill table, or drops it if drop_it. It
-- waits at most lock_wait_ms for each lock and answers -1 (nothing done) if
-- it could not have one, -2 if `spill` is not a spill table or is the target;
-- else the jobs it moved. A job is moved whole, in the state it is in: a
-- worker holding it finds it by id where it went.
CREATE FUNCTION skiplock_hot_spill_empty(spill text, drop_it boolean, lock_wait_ms integer)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    nsp       text := current_schema();
    is_target boolean;
    dest      text;
    moved     bigint;
BEGIN
    IF NOT EXISTS (SELECT FROM skiplock_hot_spill WHERE name = spill AND NOT target) THEN
        RETURN -2;
    END IF;
    PERFORM set_config('lock_timeout', lock_wait_ms || 'ms', true);
    EXECUTE format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE', nsp, spill);
    -- Made the target while this waited? Its row stays locked until this
    -- commits, so it cannot become the target midway.
    SELECT target INTO is_target FROM skiplock_hot_spill WHERE name = spill FOR UPDATE;
    IF is_target IS DISTINCT FROM false THEN
        RETURN -2;
    END IF;
    SELECT name INTO dest FROM skiplock_hot_spill WHERE target;
    EXECUTE format('INSERT INTO %I.%I SELECT * FROM ONLY %I.%I', nsp, coalesce(dest, 'skiplock_jobs'), nsp, spill);
    GET DIAGNOSTICS moved = ROW_COUNT;
    IF drop_it THEN
        EXECUTE format('DROP TABLE %I.%I', nsp, spill);
        DELETE FROM skiplock_hot_spill WHERE name = spill;
    ELSE
        EXECUTE format('TRUNCATE ONLY %I.%I', nsp, spill);
    END IF;
    RETURN moved;
EXCEPTION WHEN lock_not_available THEN
    -- The spill table's lock, or the hot table's for the drop (which a
    -- queued rebuild may stand before): nothing done.
    RETURN -1;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION skiplock_hot_spill_open(integer) SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION skiplock_hot_spill_empty(text, boolean, integer) SET search_path = %I, pg_temp', current_schema());
END $$;
