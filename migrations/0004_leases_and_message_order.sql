-- Many sessions on one project (issue 11).
-- Migrations are forward-only: never edit a released file, add a new one.

-- A session is driven by one owner at a time: a turn, an undo/revert/redo,
-- a delete (later: compaction) claims it here in one IMMEDIATE transaction.
-- `heartbeat_at` is refreshed while the claim is held; a claim whose owner
-- died (same host, pid gone) or stopped its heartbeat is taken over.
CREATE TABLE session_leases (
    session_id   TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    owner        TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    token        TEXT NOT NULL,
    acquired_at  INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);

-- A stable, monotonic order for messages (forks and paging use it):
-- existing rows are numbered in their old order, (created_at, id).
ALTER TABLE messages ADD COLUMN seq INTEGER;
UPDATE messages SET seq = r.n
  FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM messages) AS r
  WHERE messages.id = r.id;
CREATE UNIQUE INDEX idx_messages_seq ON messages(seq);
CREATE INDEX idx_messages_session_seq ON messages(session_id, seq);
