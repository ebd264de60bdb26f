// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/storeschema.h"

namespace d2dpo {

const std::vector<const char*>& storeMigrations()
{
    static const std::vector<const char*> migrations = {
        // Version 1.
        R"sql(
CREATE TABLE models (
    id            TEXT PRIMARY KEY,
    parent_id     TEXT,            -- lineage; may name a model kept in another store
    kind          TEXT NOT NULL CHECK (kind IN ('pretrained', 'd2dpo')),
    name          TEXT NOT NULL,
    path          TEXT NOT NULL,
    spec_json     TEXT NOT NULL,
    training_json TEXT NOT NULL,
    metrics_json  TEXT NOT NULL,
    run_id        INTEGER REFERENCES runs(id),
    created_at    TEXT NOT NULL
);
CREATE TABLE sequences (
    id         INTEGER PRIMARY KEY,
    model_id   TEXT REFERENCES models(id),   -- NULL when imported
    tokens     TEXT NOT NULL CHECK (length(tokens) > 0),
    created_at TEXT NOT NULL
);
CREATE TABLE pairs (
    id         INTEGER PRIMARY KEY,
    left_id    INTEGER NOT NULL REFERENCES sequences(id),
    right_id   INTEGER NOT NULL REFERENCES sequences(id),
    source     TEXT NOT NULL,                 -- 'generated', 'imported'
    created_at TEXT NOT NULL,
    CHECK (left_id <> right_id)
);
CREATE TABLE labels (
    id         INTEGER PRIMARY KEY,
    pair_id    INTEGER NOT NULL REFERENCES pairs(id),
    choice     TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie', 'skip')),
    labeler    TEXT NOT NULL CHECK (length(labeler) > 0),
    decide_ms  INTEGER NOT NULL CHECK (decide_ms >= 0),
    created_at TEXT NOT NULL,
    undone_at  TEXT                           -- undo keeps the row as history
);
-- At most one active label per pair: a double key press cannot label a pair twice.
CREATE UNIQUE INDEX labels_one_active ON labels(pair_id) WHERE undone_at IS NULL;
CREATE INDEX labels_by_labeler ON labels(labeler, id);
CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY,
    kind               TEXT NOT NULL,
    reference_model_id TEXT REFERENCES models(id),
    result_model_id    TEXT REFERENCES models(id),
    config_json        TEXT NOT NULL,
    device             TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed')),
    error              TEXT NOT NULL DEFAULT '',
    started_at         TEXT NOT NULL,
    finished_at        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE run_metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    step   INTEGER NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, name, step)
);
)sql",
        // Version 2: each sequence names its task (taskconfig.h's key) and the tasks table keeps each
        // task's spec with its vocabulary and data, so any view can read a stored sequence. Every
        // earlier store held only binary-integers sequences, whose key is their length.
        R"sql(
CREATE TABLE tasks (
    key        TEXT PRIMARY KEY,
    spec_json  TEXT NOT NULL,
    created_at TEXT NOT NULL
);
ALTER TABLE sequences ADD COLUMN task TEXT NOT NULL DEFAULT '';
UPDATE sequences SET task = 'binary-integers:' || length(tokens);
INSERT OR IGNORE INTO tasks (key, spec_json, created_at)
    SELECT DISTINCT task, json_object('name', 'binary-integers', 'length', length(tokens)),
           strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
    FROM sequences;
CREATE INDEX sequences_by_task ON sequences(task);
)sql",
        // Version 3: a run may end 'interrupted' (its process died without stopping it); the
        // operating-system lock that proves a run alive is a file named in lock_path. Imports are
        // recorded, so their pairs can be deleted as one (`d2dpo prefs delete --import N`).
        // SQLite cannot change a CHECK in place: the runs table is rebuilt (foreign keys are off
        // while migrations run, see PreferenceStore::open).
        R"sql(
CREATE TABLE runs_v3 (
    id                 INTEGER PRIMARY KEY,
    kind               TEXT NOT NULL,
    reference_model_id TEXT REFERENCES models(id),
    result_model_id    TEXT REFERENCES models(id),
    config_json        TEXT NOT NULL,
    device             TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed', 'interrupted')),
    error              TEXT NOT NULL DEFAULT '',
    started_at         TEXT NOT NULL,
    finished_at        TEXT NOT NULL DEFAULT '',
    lock_path          TEXT NOT NULL DEFAULT ''
);
INSERT INTO runs_v3 (id, kind, reference_model_id, result_model_id, config_json, device, status, error, started_at,
                     finished_at)
    SELECT id, kind, reference_model_id, result_model_id, config_json, device, status, error, started_at, finished_at
    FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
CREATE TABLE imports (
    id         INTEGER PRIMARY KEY,
    file       TEXT NOT NULL,
    task       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
ALTER TABLE pairs ADD COLUMN import_id INTEGER REFERENCES imports(id);
CREATE INDEX pairs_by_import ON pairs(import_id);
)sql",
        // Version 4: a label may say both sequences are bad ('both-bad'); the labels table is rebuilt
        // for the new CHECK (nothing references it), with its indexes.
        R"sql(
CREATE TABLE labels_v4 (
    id         INTEGER PRIMARY KEY,
    pair_id    INTEGER NOT NULL REFERENCES pairs(id),
    choice     TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie', 'skip', 'both-bad')),
    labeler    TEXT NOT NULL CHECK (length(labeler) > 0),
    decide_ms  INTEGER NOT NULL CHECK (decide_ms >= 0),
    created_at TEXT NOT NULL,
    undone_at  TEXT
);
INSERT INTO labels_v4 SELECT id, pair_id, choice, labeler, decide_ms, created_at, undone_at FROM labels;
DROP TABLE labels;
ALTER TABLE labels_v4 RENAME TO labels;
CREATE UNIQUE INDEX labels_one_active ON labels(pair_id) WHERE undone_at IS NULL;
CREATE INDEX labels_by_labeler ON labels(labeler, id);
)sql",
        // Version 5: a model's evaluations, measured once per sampler, sample count and seed, so
        // that every view shows the same figures with the same provenance.
        R"sql(
CREATE TABLE evaluations (
    model_id     TEXT NOT NULL REFERENCES models(id),
    sampler      TEXT NOT NULL,
    samples      INTEGER NOT NULL CHECK (samples > 0),
    seed         INTEGER NOT NULL,
    metrics_json TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (model_id, sampler, samples, seed)
);
)sql",
        // Version 6: deletes stay linear (a pair's sequences and a label's pair are found by index,
        // for the foreign-key checks too), and an imported label keeps the identity it had in its
        // file, so a file imported twice adds nothing while two distinct labels are never one.
        R"sql(
CREATE INDEX pairs_by_left ON pairs(left_id);
CREATE INDEX pairs_by_right ON pairs(right_id);
CREATE INDEX labels_by_pair ON labels(pair_id);
CREATE INDEX sequences_by_model ON sequences(model_id);
ALTER TABLE labels ADD COLUMN import_key TEXT;
CREATE INDEX labels_by_import_key ON labels(import_key) WHERE import_key IS NOT NULL;
)sql",
        // Version 7: several labelers per pair. A pair is labelled by up to `overlap` different labelers
        // (settings), none of them twice; gold pairs carry a known answer, measure the labelers who
        // label them and train nothing; a blind comparison's pairs hold one sample of each of two
        // models and train nothing either.
        R"sql(
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE comparisons (
    id          INTEGER PRIMARY KEY,
    task        TEXT NOT NULL,
    models_json TEXT NOT NULL,   -- the compared models' ids, as given
    created_at  TEXT NOT NULL
);
ALTER TABLE pairs ADD COLUMN purpose TEXT NOT NULL DEFAULT 'train' CHECK (purpose IN ('train', 'gold', 'compare'));
ALTER TABLE pairs ADD COLUMN gold_choice TEXT CHECK (gold_choice IN ('left', 'right'));
ALTER TABLE pairs ADD COLUMN comparison_id INTEGER REFERENCES comparisons(id);
CREATE INDEX pairs_by_comparison ON pairs(comparison_id) WHERE comparison_id IS NOT NULL;
DROP INDEX labels_one_active;
CREATE UNIQUE INDEX labels_one_active_per_labeler ON labels(pair_id, labeler) WHERE undone_at IS NULL;
)sql",
        // Version 8: informative pairs first. A pair may carry a model's implicit reward margin on it
        // (left minus right) and which model gave it; the queue can hand out the least sure first.
        R"sql(
ALTER TABLE pairs ADD COLUMN margin REAL;
ALTER TABLE pairs ADD COLUMN margin_model TEXT;
)sql",
        // Version 9: teams. A pair handed to a labeler is leased to it for a while, so that others are
        // not handed it past its overlap; an expired lease is ignored (the pair goes back). Counting
        // views let a team store's labelers see how far each pair and each labeler has come without
        // reading others' labels (postgresschema.cpp makes the same on PostgreSQL).
        R"sql(
CREATE TABLE leases (
    pair_id    INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
    labeler    TEXT NOT NULL CHECK (length(labeler) > 0),
    expires_at INTEGER NOT NULL,    -- seconds since the epoch, by the database's clock
    PRIMARY KEY (pair_id, labeler)
);
CREATE INDEX leases_by_labeler ON leases(labeler);
CREATE VIEW label_tally AS
    SELECT pair_id, count(*) AS active FROM labels WHERE undone_at IS NULL GROUP BY pair_id;
CREATE VIEW labeler_tally AS
    SELECT labeler, count(*) AS labels FROM labels WHERE undone_at IS NULL GROUP BY labeler;
CREATE VIEW active_leases AS
    SELECT pair_id, labeler, expires_at FROM leases WHERE expires_at > CAST(strftime('%s', 'now') AS INTEGER);
)sql",
        // Version 10: a model's checkpoint may live in the store itself. A team store keeps each
        // model's file here, so every maintainer's machine reaches it (a path is one machine's);
        // an SQLite store keeps its files beside it and leaves this table empty.
        R"sql(
CREATE TABLE model_files (
    model_id   TEXT PRIMARY KEY REFERENCES models(id) ON DELETE CASCADE,
    bytes      BLOB NOT NULL,
    size       INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
)sql",
        // Version 11: an imported sequence keeps the id of the model that drew it, as its file
        // said, when that model is not in this store (model_id links only to models here), so a
        // JSONL export gives back the ids it was given.
        R"sql(
ALTER TABLE sequences ADD COLUMN made_by TEXT;
)sql",
        // Version 12: measurements (assays/). An assay names what was measured, which way is better
        // and the task its sequences belong to; each imported file is recorded once per assay by its
        // content's digest, so importing it again adds nothing, and a sequence measured twice keeps
        // both values.
        R"sql(
CREATE TABLE assays (
    name       TEXT PRIMARY KEY CHECK (length(name) > 0),
    direction  TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
    task       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE assay_imports (
    id         INTEGER PRIMARY KEY,
    assay      TEXT NOT NULL REFERENCES assays(name),
    file       TEXT NOT NULL,
    digest     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX assay_imports_once ON assay_imports(assay, digest);
CREATE TABLE measurements (
    id         INTEGER PRIMARY KEY,
    import_id  INTEGER NOT NULL REFERENCES assay_imports(id),
    tokens     TEXT NOT NULL CHECK (length(tokens) > 0),
    value      REAL NOT NULL,
    sd         REAL CHECK (sd IS NULL OR sd >= 0),
    replicates INTEGER NOT NULL DEFAULT 1 CHECK (replicates >= 1),
    line       INTEGER NOT NULL
);
CREATE INDEX measurements_by_import ON measurements(import_id);
)sql",
    };
    return migrations;
}

} // namespace d2dpo
