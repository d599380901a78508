-- Shares this machine created (spec 022, "My shares"). No foreign key to
-- sessions: a share outlives its local session and can still be revoked.
-- The share's secret is not here: it is kept like an API key (keychain,
-- else the 0600 file), under `secret_ref`.
CREATE TABLE shares (
    id TEXT NOT NULL,
    server TEXT NOT NULL,
    url TEXT NOT NULL,
    session_id TEXT NOT NULL,
    session_title TEXT NOT NULL,
    secret_ref TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (server, id)
);
CREATE INDEX shares_session ON shares(session_id);
