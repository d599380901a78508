-- mia-code session store, schema version 1 (spec 018, with fork, status,
-- message type and compaction archive for specs 019/020).
-- Migrations are forward-only: never edit a released file, add a new one.

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY NOT NULL,
    slug         TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    directory    TEXT NOT NULL,
    parent_id    TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    fork         TEXT CHECK (fork IS NULL OR json_valid(fork)),
    title        TEXT NOT NULL DEFAULT '',
    version      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'busy', 'compacting')),
    agent        TEXT,
    model        TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    archived_at  INTEGER
);

CREATE TABLE messages (
    id           TEXT PRIMARY KEY NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    type         TEXT NOT NULL DEFAULT 'normal',
    metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at   INTEGER NOT NULL,
    -- Compaction archive: set to the summary message that replaced this one in
    -- the model's context. The row itself is never deleted by compaction.
    compacted_by TEXT REFERENCES messages(id) ON DELETE SET NULL
);

CREATE TABLE parts (
    id           TEXT PRIMARY KEY NOT NULL,
    message_id   TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    content      TEXT NOT NULL CHECK (json_valid(content)),
    "index"      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (message_id, "index")
);

CREATE INDEX idx_sessions_project   ON sessions(project_id);
CREATE INDEX idx_sessions_directory ON sessions(directory);
CREATE INDEX idx_sessions_created   ON sessions(created_at);
CREATE INDEX idx_messages_session   ON messages(session_id, created_at);
CREATE INDEX idx_parts_message      ON parts(message_id, "index");

-- Not in spec 018's list but needed by what it implies: children of a fork,
-- and the compaction archive lookup.
CREATE INDEX idx_sessions_parent    ON sessions(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX idx_messages_compacted ON messages(compacted_by) WHERE compacted_by IS NOT NULL;
