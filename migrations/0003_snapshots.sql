-- Snapshot index (issue 7; specs 076, 077, 021). The trees themselves live in
-- each project's hidden repo (<project>/.mia-code/snapshots/); these tables
-- keep what a session lists and what undo/revert work from.
-- Migrations are forward-only: never edit a released file, add a new one.

-- One row per snapshot a session took (baseline, before a step, before a
-- revert). `unavailable` is set when no snapshot could be taken (time budget,
-- lock): undo is then unavailable for that step.
CREATE TABLE snapshots (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    hash           TEXT NOT NULL DEFAULT '',
    message_id     TEXT,
    tool_call_id   TEXT,
    kind           TEXT NOT NULL DEFAULT 'step' CHECK (kind IN ('baseline', 'step', 'revert')),
    files          INTEGER NOT NULL DEFAULT 0,
    excluded       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(excluded)),
    excluded_total INTEGER NOT NULL DEFAULT 0,
    mode           TEXT NOT NULL DEFAULT '',
    ms             INTEGER NOT NULL DEFAULT 0,
    unavailable    TEXT,
    created_at     INTEGER NOT NULL
);

CREATE INDEX idx_snapshots_session ON snapshots(session_id, seq);
CREATE INDEX idx_snapshots_hash    ON snapshots(hash);

-- One row per file-modifying step (tool call, undo/revert, redo): the
-- snapshots around it and the files it changed. `record` is the full step
-- record as mia-snapshot serialises it (kind, changes, uncaptured files).
CREATE TABLE snapshot_steps (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id   TEXT NOT NULL,
    tool_call_id TEXT,
    kind         TEXT NOT NULL CHECK (kind IN ('tool', 'revert', 'redo')),
    before_hash  TEXT NOT NULL,
    after_hash   TEXT NOT NULL,
    record       TEXT NOT NULL CHECK (json_valid(record)),
    created_at   INTEGER NOT NULL,
    UNIQUE (session_id, id)
);

CREATE INDEX idx_snapshot_steps_session ON snapshot_steps(session_id, seq);
