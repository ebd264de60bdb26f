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
-- Nothing a labeler reads tells a gold pair from another: not its purpose, source, time or margin
-- (gold pairs are never scored), nor how many labels or leases a pair has (postgresqueue.cpp).
GRANT SELECT ON store_meta, tasks, settings, labeler_tally TO d2dpo_labeler;
GRANT SELECT (id, left_id, right_id, comparison_id) ON pairs TO d2dpo_labeler;
GRANT SELECT (id, tokens, task) ON sequences TO d2dpo_labeler;
GRANT SELECT ON labels TO d2dpo_labeler;
GRANT SELECT ON leases TO d2dpo_labeler;
ALTER TABLE labels ENABLE ROW LEVEL SECURITY;
ALTER TABLE leases ENABLE ROW LEVEL SECURITY;
-- Nothing of a labeler's own may stand in the store's schema (PostgreSQL 15 starts so; an older
-- cluster's databases do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- Nor may a labeler fill the server's disk with temporary tables (maintainers' imports use them).
-- Only the database's owner may say so; a store whose database another owns keeps the default.
DO $$
BEGIN
    IF (SELECT datdba FROM pg_database WHERE datname = current_database()) =
       (SELECT oid FROM pg_roles WHERE rolname = current_user)
       OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
        EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO d2dpo_maintainer', current_database());
    END IF;
END
$$;
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

-- Access versions 2 and 3 leased pairs a client chose; the queue is the server's now.
DROP FUNCTION IF EXISTS d2dpo_lease_pairs(bigint[]);
DROP FUNCTION IF EXISTS d2dpo_lease_pairs(bigint[], integer);

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
    -- Her own label first: a retried choice whose first commit went through is known as hers.
    IF EXISTS (SELECT 1 FROM labels WHERE pair_id = p_pair AND labeler = who AND undone_at IS NULL) THEN
        RAISE EXCEPTION 'pair % already has a label by %', p_pair, who USING ERRCODE = 'unique_violation';
    END IF;
    -- Then only a pair the queue handed the caller (a lease, expired or not: choices kept through
    -- an outage still count), the same refusal for every other id, so no id is probed for gold.
    IF NOT EXISTS (SELECT 1 FROM leases WHERE pair_id = p_pair AND labeler = who) THEN
        RAISE EXCEPTION 'pair % was not handed to % by the queue (labelers label the pairs their queue gives them)',
            p_pair, who USING ERRCODE = '42501';
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
    -- The claim's turn (d2dpo_claim_pairs): an undo and a claim at once cannot pass the cap together.
    INSERT INTO claim_turns (labeler) VALUES (who) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM claim_turns WHERE labeler = who FOR UPDATE;
    UPDATE labels SET undone_at = to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        WHERE id = coalesce(p_label, (SELECT max(id) FROM labels WHERE labeler = who AND undone_at IS NULL))
          AND labeler = who AND undone_at IS NULL
        RETURNING pair_id INTO v_pair;
    -- The undone pair is the caller's to label again, under the cap every lease obeys
    -- (d2dpo_claim_pairs): past it, the pair goes back to the queue like any other.
    IF v_pair IS NOT NULL AND
       (SELECT count(*) FROM leases WHERE labeler = who AND pair_id <> v_pair
                                      AND expires_at > CAST(extract(epoch FROM clock_timestamp()) AS BIGINT)) < 16 THEN
        INSERT INTO leases (pair_id, labeler, expires_at)
            VALUES (v_pair, who, CAST(extract(epoch FROM clock_timestamp()) AS BIGINT) +
                                 least(greatest(coalesce((SELECT CAST(value AS BIGINT) FROM settings
                                                          WHERE key = 'lease_seconds'), 600), 1), 86400))
            ON CONFLICT (pair_id, labeler) DO UPDATE SET expires_at = excluded.expires_at;
    END IF;
    RETURN v_pair;
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
    d2dpo_undo_label(bigint), d2dpo_release_leases() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION d2dpo_labeler_identity(), d2dpo_add_label(bigint, text, bigint),
    d2dpo_undo_label(bigint), d2dpo_release_leases() TO d2dpo_labeler, d2dpo_maintainer;
)sql";
}

} // namespace d2dpo
