// SPDX-License-Identifier: GPL-3.0-or-later
// A labeler's queue on a team store, built by the server. A gold pair (its answer known, its
// labels measuring the labeler) must look like any other pair to the one labelling it: a labeler
// therefore reads neither a pair's purpose nor how many labels or leases each pair has (a gold
// pair is labelled by everyone, past the overlap), and the server, not the client, chooses the
// pairs it is shown, mixing gold ones in at the gold rate. A labeler labels only pairs the queue
// handed it (postgresaccess.cpp), so no probing of pairs by id tells gold from ordinary.
#include "store/postgresschema.h"

namespace d2dpo {

const char* postgresQueueScript()
{
    // The queue's order is one of three fixed ORDER BY clauses (storequeue.cpp's orderBy, the
    // same for maintainers on either engine). Gold pairs are drawn by a hash of the labeler, the
    // queue's head and the position, so a queue read twice is the same queue, as on SQLite.
    return R"sql(
-- One row per labeler, locked while it claims: two windows of one labeler claiming at once take
-- turns, so they cannot pass the cap together. A labeler may not lock it otherwise.
CREATE TABLE IF NOT EXISTS claim_turns (labeler TEXT PRIMARY KEY);
REVOKE ALL ON claim_turns FROM PUBLIC, d2dpo_labeler, d2dpo_maintainer;

-- How many pairs each labeler holds now: what a labeler may know of the others' leases.
CREATE OR REPLACE VIEW lease_tally AS
    SELECT labeler, count(*) AS leased FROM leases
    WHERE expires_at > CAST(extract(epoch FROM now()) AS BIGINT) GROUP BY labeler;
ALTER VIEW lease_tally SET (security_barrier = true);
REVOKE ALL ON lease_tally FROM PUBLIC;
GRANT SELECT ON lease_tally TO d2dpo_labeler, d2dpo_maintainer;

-- The pairs p_who would be shown next, in order, at most p_limit: those it has not labelled that
-- others' labels (and, with p_heed_leases, others' unexpired leases) do not fill, with gold pairs
-- mixed in at the gold rate while ordinary ones remain. Pairs p_who holds are left out when
-- p_heed_leases (the claim hands those back first). Not granted: the functions below call it.
CREATE OR REPLACE FUNCTION d2dpo_queue(p_who text, p_limit integer, p_task text, p_heed_leases boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    v_now bigint := CAST(extract(epoch FROM clock_timestamp()) AS BIGINT);
    v_overlap bigint := coalesce((SELECT CAST(value AS BIGINT) FROM settings WHERE key = 'overlap'), 1);
    v_rate double precision := least(greatest(coalesce((SELECT CAST(value AS DOUBLE PRECISION) FROM settings
                                                         WHERE key = 'gold_rate'), 0), 0), 0.5);
    v_order text := CASE (SELECT value FROM settings WHERE key = 'order')
        WHEN 'least-sure' THEN 'p.purpose <> ''compare'', p.margin IS NULL, abs(p.margin), p.id'
        WHEN 'surest' THEN 'p.purpose <> ''compare'', p.margin IS NULL, abs(p.margin) DESC, p.id'
        ELSE 'p.id' END;
    v_limit integer := greatest(coalesce(p_limit, 0), 0);
    v_ordinary bigint[];
    v_gold bigint[];
    v_next_ordinary integer := 1;
    v_next_gold integer := 1;
    v_shown integer := 0;
    v_draw double precision;
BEGIN
    EXECUTE format($q$SELECT ARRAY(
        SELECT p.id FROM pairs p JOIN sequences ls ON ls.id = p.left_id
        WHERE p.purpose <> 'gold'
          AND (SELECT count(*) FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL)
            + (CASE WHEN $5 THEN (SELECT count(*) FROM leases a
                                  WHERE a.pair_id = p.id AND a.labeler <> $1 AND a.expires_at > $3) ELSE 0 END) < $4
          AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = $1)
          AND (NOT $5 OR NOT EXISTS (SELECT 1 FROM leases a
                                     WHERE a.pair_id = p.id AND a.labeler = $1 AND a.expires_at > $3))
          AND ($2 = '' OR ls.task = $2)
        ORDER BY %s LIMIT $6)$q$, v_order)
        INTO v_ordinary USING p_who, coalesce(p_task, ''), v_now, v_overlap, p_heed_leases, v_limit;
    IF v_rate > 0 THEN
        v_gold := ARRAY(
            SELECT p.id FROM pairs p JOIN sequences ls ON ls.id = p.left_id
            WHERE p.purpose = 'gold'
              AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = p_who)
              AND (NOT p_heed_leases OR NOT EXISTS (SELECT 1 FROM leases a WHERE a.pair_id = p.id
                                                        AND a.labeler = p_who AND a.expires_at > v_now))
              AND (coalesce(p_task, '') = '' OR ls.task = p_task)
            ORDER BY p.id LIMIT v_limit);
    ELSE
        v_gold := '{}';
    END IF;
    WHILE v_next_ordinary <= pg_catalog.cardinality(v_ordinary) AND v_shown < v_limit LOOP
        v_draw := (pg_catalog.hashtext(p_who || ':' || v_ordinary[1] || ':' || v_shown) & 2147483647) / 2147483648.0;
        IF v_next_gold <= pg_catalog.cardinality(v_gold) AND v_next_gold < v_next_ordinary + 1 AND v_draw < v_rate THEN
            RETURN NEXT v_gold[v_next_gold];
            v_next_gold := v_next_gold + 1;
        ELSE
            RETURN NEXT v_ordinary[v_next_ordinary];
            v_next_ordinary := v_next_ordinary + 1;
        END IF;
        v_shown := v_shown + 1;
    END LOOP;
END
$f$;

-- The caller's queue, as d2dpo_queue orders it (without leases: what waits for it, not what it
-- may take now).
CREATE OR REPLACE FUNCTION d2dpo_pending_pairs(p_limit integer, p_task text) RETURNS SETOF bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
    SELECT * FROM d2dpo_queue(session_user, p_limit, p_task, false); -- reading, not labelling: any role
$f$;

-- What the caller's counts show: the ordinary pairs still waiting for it, and the store's
-- decisive training labels (neither tells which pairs are gold).
CREATE OR REPLACE FUNCTION d2dpo_queue_counts(OUT waiting bigint, OUT decisive bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
DECLARE
    who text := session_user; -- reading, not labelling: any role may count
    v_overlap bigint := coalesce((SELECT CAST(value AS BIGINT) FROM settings WHERE key = 'overlap'), 1);
BEGIN
    SELECT count(*) INTO waiting FROM pairs p
    WHERE p.purpose <> 'gold'
      AND (SELECT count(*) FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL) < v_overlap
      AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = who);
    SELECT count(*) INTO decisive FROM labels l JOIN pairs p ON p.id = l.pair_id
    WHERE l.undone_at IS NULL AND l.choice IN ('left', 'right') AND p.purpose = 'train';
END
$f$;

-- The store's one way for a labeler to hold pairs: the pairs it holds already (renewed), then the
-- next of its queue, each leased for the queue's lease time, up to p_count and 16 held at once
-- (QueueSettings::kMaxLeasesPerLabeler); the pairs, in the order to show them.
CREATE OR REPLACE FUNCTION d2dpo_claim_pairs(p_count integer, p_task text) RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET lock_timeout = '5s' AS $f$
DECLARE
    who text := d2dpo_labeler_identity();
    v_now bigint := CAST(extract(epoch FROM clock_timestamp()) AS BIGINT);
    v_seconds bigint := least(greatest(coalesce((SELECT CAST(value AS BIGINT) FROM settings
                                                  WHERE key = 'lease_seconds'), 600), 1), 86400);
    v_overlap bigint := coalesce((SELECT CAST(value AS BIGINT) FROM settings WHERE key = 'overlap'), 1);
    v_cap constant integer := 16;
    v_want integer := least(greatest(coalesce(p_count, 0), 0), v_cap);
    v_pair bigint;
    v_purpose text;
    v_taken integer := 0;
BEGIN
    INSERT INTO claim_turns (labeler) VALUES (who) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM claim_turns WHERE labeler = who FOR UPDATE;
    FOR v_pair IN SELECT a.pair_id FROM leases a JOIN pairs p ON p.id = a.pair_id JOIN sequences ls ON ls.id = p.left_id
                  WHERE a.labeler = who AND a.expires_at > v_now
                    AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = a.pair_id AND l.labeler = who
                                                             AND l.undone_at IS NULL)
                    AND (coalesce(p_task, '') = '' OR ls.task = p_task)
                  ORDER BY a.pair_id LIMIT v_want LOOP
        UPDATE leases SET expires_at = v_now + v_seconds WHERE pair_id = v_pair AND labeler = who;
        v_taken := v_taken + 1;
        RETURN NEXT v_pair;
    END LOOP;
    FOR v_pair IN SELECT * FROM d2dpo_queue(who, 64, p_task, true) LOOP
        EXIT WHEN v_taken >= v_want;
        EXIT WHEN (SELECT count(*) FROM leases WHERE labeler = who AND expires_at > v_now) >= v_cap;
        SELECT purpose INTO v_purpose FROM pairs WHERE id = v_pair FOR NO KEY UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND; -- gone, or another is labelling or leasing it right now
        -- Read again under the pair's lock: others may have labelled or leased it since.
        CONTINUE WHEN v_purpose <> 'gold' AND
            (SELECT count(*) FROM labels WHERE pair_id = v_pair AND undone_at IS NULL) +
            (SELECT count(*) FROM leases WHERE pair_id = v_pair AND labeler <> who AND expires_at > v_now) >= v_overlap;
        INSERT INTO leases (pair_id, labeler, expires_at) VALUES (v_pair, who, v_now + v_seconds)
            ON CONFLICT (pair_id, labeler) DO UPDATE SET expires_at = excluded.expires_at;
        v_taken := v_taken + 1;
        RETURN NEXT v_pair;
    END LOOP;
END
$f$;

REVOKE ALL ON FUNCTION d2dpo_queue(text, integer, text, boolean), d2dpo_pending_pairs(integer, text),
    d2dpo_queue_counts(), d2dpo_claim_pairs(integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION d2dpo_pending_pairs(integer, text), d2dpo_queue_counts(), d2dpo_claim_pairs(integer, text)
    TO d2dpo_labeler, d2dpo_maintainer;

-- The functions, and what only they touch, belong to the store's owner, never to a superuser who
-- upgraded it: they run with its rights.
DO $$
DECLARE
    v_owner text := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'store_meta'::regclass);
    v_function text;
BEGIN
    FOR v_function IN SELECT CAST(CAST(p.oid AS regprocedure) AS text) FROM pg_proc p
                      JOIN pg_namespace n ON n.oid = p.pronamespace
                      WHERE n.nspname = 'public' AND p.proname LIKE 'd2dpo\_%' LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', v_function, v_owner);
    END LOOP;
    EXECUTE format('ALTER TABLE claim_turns OWNER TO %I', v_owner);
    EXECUTE format('ALTER VIEW lease_tally OWNER TO %I', v_owner);
END
$$;
)sql";
}

} // namespace d2dpo
