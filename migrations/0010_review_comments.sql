-- Review comments a person wrote on diff lines, kept per session until
-- they are sent to the agent as one message (or cleared). `quote` holds
-- the lines as they were (a JSON array), so a comment whose lines later
-- change is marked outdated rather than lost.
CREATE TABLE review_comments (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    file       TEXT NOT NULL,
    line       INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    body       TEXT NOT NULL,
    quote      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX review_comments_session ON review_comments(session_id, created_at);
