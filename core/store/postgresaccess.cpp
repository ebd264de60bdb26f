// SPDX-License-Identifier: GPL-3.0-or-later
// Who may do what on a team store. A labeler is a login role in d2dpo_labeler, and whatever it
// tries with psql and its own password, it labels only as itself: its identity is session_user
// (SET ROLE cannot change it), it writes labels and leases only through the functions below (the
// server sets the id, the time, the lease's length and a cap on how many pairs one labeler holds),
// and it reads pairs and sequences without gold answers or the models that made them.
#include "store/postgresschema.h"

namespace d2dpo {

const char* postgresAccessScript()
{
    // The functions never take a store-wide lock: a lock lasts to the end of the caller's
    // transaction, and a labeler who calls a function inside a transaction it keeps open would hold
    // everyone up. They lock the one pair they work on (its row in pairs): adding a label waits
    // 2 s at most for it, a lease skips a pair another is working on. Maintainers' writes lock the
    // same rows (storelabels.cpp, storeleases.cpp) besides the store's write lock, an EXCLUSIVE
    // lock on store_meta that a labeler, who may not write store_meta, cannot take. Times are
    // clock_timestamp(), the moment of the call, not the start of a transaction the caller chose.
    // SECURITY DEFINER functions fix their search_path, pg_temp last, and name the one polymorphic
    // built-in they use by its schema, so that no object of anyone else's stands in for the store's.
    return R"sql(
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'd2dpo_labeler') THEN
        CREATE ROLE d2dpo_labeler NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'd2dpo_maintainer') THEN
        CREATE ROLE d2dpo_maintainer NOLOGIN;
    END IF;
END
$$;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC, d2dpo_labeler;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM PUBLIC, d2dpo_labeler;
GRANT USAGE ON SCHEMA public TO d2dpo_labeler, d2dpo_maintainer;
-- Maintainers generate pairs, train, manage models and runs, import and delete labels.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO d2dpo_maintainer;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO d2dpo_maintainer;
-- Labelers read the pairs (not a gold pair's answer, nor which model made a sequence), the tasks,
-- the queue's settings, their own labels and leases, and the counting views; they write nothing
-- but through the functions.
GRANT SELECT ON store_meta, tasks, settings, label_tally, labeler_tally, active_leases TO d2dpo_labeler;
GRANT SELECT (id, left_id, right_id, source, created_at, import_id, purpose, comparison_id, margin)
    ON pairs TO d2dpo_labeler;
GRANT SELECT (id, tokens, created_at, task) ON sequences TO d2dpo_labeler;
GRANT SELECT ON labels TO d2dpo_labeler;
GRANT SELECT ON leases TO d2dpo_labeler;
ALTER TABLE labels ENABLE ROW LEVEL SECURITY;
ALTER TABLE leases ENABLE ROW LEVEL SECURITY;
-- Nothing of a labeler's own may stand in the store's schema (PostgreSQL 15 starts so; an older
-- cluster's databases do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- The counting views filter as their owner: no function of a caller's sees past their filters.
ALTER VIEW label_tally SET (security_barrier = true);
ALTER VIEW labeler_tally SET (security_barrier = true);
ALTER VIEW active_leases SET (security_barrier = true);
DROP POLICY IF EXISTS labels_by_maintainers ON labels;
DROP POLICY IF EXISTS labels_own ON labels;
DROP POLICY IF EXISTS leases_by_maintainers ON leases;
DROP POLICY IF EXISTS leases_own ON leases;
CREATE POLICY labels_by_maintainers ON labels TO d2dpo_maintainer USING (true) WITH CHECK (true);
CREATE POLICY labels_own ON labels TO d2dpo_labeler USING (labeler = session_user) WITH CHECK (false);
CREATE POLICY leases_by_maintainers ON leases TO d2dpo_maintainer USING (true) WITH CHECK (true);
CREATE POLICY leases_own ON leases TO d2dpo_labeler USING (labeler = session_user) WITH CHECK (false);

DROP FUNCTION IF EXISTS d2dpo_lease_pairs(bigint[]); -- access version 2's, without a count

-- The labeler a function acts for: the role that logged in, never a group and never a name
-- that would print as two lines.
CREATE OR REPLACE FUNCTION d2dpo_labeler_identity() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    who text := session_user;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = who AND rolcanlogin) THEN
        RAISE EXCEPTION 'the role % cannot log in, so it labels nothing', who USING ERRCODE = '42501';
    END IF;
    IF who ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'a role whose name holds a control character labels nothing' USING ERRCODE = '42501';
    END IF;
    RETURN who;
END
$f$;

-- A label by the role that logged in, on a pair that still needs it: the id, the time and the
-- bounds of its decision time are the server's.
CREATE OR REPLACE FUNCTION d2dpo_add_label(p_pair bigint, p_choice text, p_decide_ms bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET lock_timeout = '2s' AS $f$
DECLARE
    who text := d2dpo_labeler_identity();
    v_purpose text;
    v_overlap bigint := coalesce((SELECT CAST(value AS BIGINT) FROM settings WHERE key = 'overlap'), 1);
    v_now bigint := CAST(extract(epoch FROM clock_timestamp()) AS BIGINT);
    v_id bigint;
BEGIN
    SELECT purpose INTO v_purpose FROM pairs WHERE id = p_pair FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pair % does not exist', p_pair USING ERRCODE = 'no_data_found';
    END IF;
    IF EXISTS (SELECT 1 FROM labels WHERE pair_id = p_pair AND labeler = who AND undone_at IS NULL) THEN
        RAISE EXCEPTION 'pair % already has a label by %', p_pair, who USING ERRCODE = 'unique_violation';
    END IF;
    IF v_purpose <> 'gold' AND
       (SELECT count(*) FROM labels WHERE pair_id = p_pair AND undone_at IS NULL) >= v_overlap THEN
        RAISE EXCEPTION 'pair % already has its % labels', p_pair, v_overlap USING ERRCODE = 'unique_violation';
    END IF;
    -- A pair others hold up to its overlap is theirs to label, unless the caller holds it too.
    IF v_purpose <> 'gold' AND
       NOT EXISTS (SELECT 1 FROM leases WHERE pair_id = p_pair AND labeler = who AND expires_at > v_now) AND
       (SELECT count(*) FROM labels WHERE pair_id = p_pair AND undone_at IS NULL) +
       (SELECT count(*) FROM leases WHERE pair_id = p_pair AND labeler <> who AND expires_at > v_now) >= v_overlap THEN
        RAISE EXCEPTION 'pair % is held by other labelers', p_pair USING ERRCODE = 'unique_violation';
    END IF;
    INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at)
        VALUES (p_pair, p_choice, who, least(greatest(coalesce(p_decide_ms, 0), 0), 86400000),
                to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        RETURNING id INTO v_id;
    DELETE FROM leases WHERE pair_id = p_pair AND labeler = who; -- the lease became a label
    RETURN v_id;
END
$f$;

-- Undoes one of the caller's own active labels (the newest when p_label is NULL); the pair's
-- id, or NULL when there was none.
CREATE OR REPLACE FUNCTION d2dpo_undo_label(p_label bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    who text := d2dpo_labeler_identity();
    v_pair bigint;
BEGIN
    UPDATE labels SET undone_at = to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        WHERE id = coalesce(p_label, (SELECT max(id) FROM labels WHERE labeler = who AND undone_at IS NULL))
          AND labeler = who AND undone_at IS NULL
        RETURNING pair_id INTO v_pair;
    RETURN v_pair;
END
$f$;

-- The store's one way for a labeler to hold pairs: of p_pairs, in the order given, the first
-- p_count it may still label and that others' labels and leases do not fill are leased for the
-- queue's lease time, up to 16 pairs held at once (QueueSettings::kMaxLeasesPerLabeler); the
-- pairs leased. A client offers more candidates than it needs, so that pairs others took since
-- it read the queue are made up for.
CREATE OR REPLACE FUNCTION d2dpo_lease_pairs(p_pairs bigint[], p_count integer) RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    who text := d2dpo_labeler_identity();
    v_now bigint := CAST(extract(epoch FROM clock_timestamp()) AS BIGINT);
    v_seconds bigint := least(greatest(coalesce((SELECT CAST(value AS BIGINT) FROM settings
                                                  WHERE key = 'lease_seconds'), 600), 1), 86400);
    v_overlap bigint := coalesce((SELECT CAST(value AS BIGINT) FROM settings WHERE key = 'overlap'), 1);
    v_cap constant integer := 16;
    v_pair bigint;
    v_purpose text;
    v_taken integer := 0;
BEGIN
    IF coalesce(pg_catalog.cardinality(p_pairs), 0) > 64 THEN
        RAISE EXCEPTION 'at most 64 pairs are asked for at once' USING ERRCODE = '22023';
    END IF;
    FOREACH v_pair IN ARRAY coalesce(p_pairs, '{}') LOOP
        EXIT WHEN v_taken >= least(coalesce(p_count, 0), v_cap);
        SELECT purpose INTO v_purpose FROM pairs WHERE id = v_pair FOR NO KEY UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND; -- gone, or another is labelling or leasing it right now
        CONTINUE WHEN EXISTS (SELECT 1 FROM labels WHERE pair_id = v_pair AND labeler = who AND undone_at IS NULL);
        IF NOT EXISTS (SELECT 1 FROM leases WHERE pair_id = v_pair AND labeler = who AND expires_at > v_now) THEN
            EXIT WHEN (SELECT count(*) FROM leases WHERE labeler = who AND expires_at > v_now) >= v_cap;
            CONTINUE WHEN v_purpose <> 'gold' AND
                (SELECT count(*) FROM labels WHERE pair_id = v_pair AND undone_at IS NULL) +
                (SELECT count(*) FROM leases WHERE pair_id = v_pair AND labeler <> who AND expires_at > v_now)
                    >= v_overlap;
        END IF;
        INSERT INTO leases (pair_id, labeler, expires_at) VALUES (v_pair, who, v_now + v_seconds)
            ON CONFLICT (pair_id, labeler) DO UPDATE SET expires_at = excluded.expires_at;
        v_taken := v_taken + 1;
        RETURN NEXT v_pair;
    END LOOP;
END
$f$;

-- Gives back every pair the caller holds (a closed window's), so the others may take them now.
CREATE OR REPLACE FUNCTION d2dpo_release_leases() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    who text := d2dpo_labeler_identity();
    v_count bigint;
BEGIN
    DELETE FROM leases WHERE labeler = who;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$f$;

REVOKE ALL ON FUNCTION d2dpo_labeler_identity(), d2dpo_add_label(bigint, text, bigint),
    d2dpo_undo_label(bigint), d2dpo_lease_pairs(bigint[], integer), d2dpo_release_leases() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION d2dpo_labeler_identity(), d2dpo_add_label(bigint, text, bigint),
    d2dpo_undo_label(bigint), d2dpo_lease_pairs(bigint[], integer), d2dpo_release_leases()
    TO d2dpo_labeler, d2dpo_maintainer;
-- The functions run with the rights of the store's owner, never of a superuser who upgraded it.
DO $$
DECLARE
    v_owner text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'store_meta'::regclass);
    v_function text;
BEGIN
    FOREACH v_function IN ARRAY ARRAY['d2dpo_labeler_identity()', 'd2dpo_add_label(bigint, text, bigint)',
                                      'd2dpo_undo_label(bigint)', 'd2dpo_lease_pairs(bigint[], integer)',
                                      'd2dpo_release_leases()'] LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', v_function, v_owner);
    END LOOP;
END
$$;
)sql";
}

} // namespace d2dpo
