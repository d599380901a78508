-- mia-code permissions (issue 3, specs 011/074): the audit log of permission
-- checks, "always for this project" approvals, and per-project workspace trust.
-- Migrations are forward-only: never edit a released file, add a new one.

-- One row per permission check. No foreign key to sessions: the audit trail
-- outlives the sessions it describes.
CREATE TABLE permission_audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ts          INTEGER NOT NULL,
    session_id  TEXT,
    agent       TEXT NOT NULL,
    permission  TEXT NOT NULL,
    target      TEXT NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    rule        TEXT,
    layer       TEXT,
    source      TEXT,
    reason      TEXT NOT NULL
);
CREATE INDEX idx_permission_audit_session ON permission_audit(session_id, ts);
CREATE INDEX idx_permission_audit_ts      ON permission_audit(ts);

-- "Always for this project" answers: persisted, listed, revocable.
-- `project` is the canonical absolute project root.
CREATE TABLE permission_approvals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project     TEXT NOT NULL,
    permission  TEXT NOT NULL,
    pattern     TEXT,
    action      TEXT NOT NULL DEFAULT 'allow' CHECK (action IN ('allow', 'ask', 'deny')),
    session_id  TEXT,
    created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX idx_permission_approvals_rule
    ON permission_approvals(project, permission, ifnull(pattern, ''), action);

-- Workspaces the user trusted: until then project config may only tighten.
CREATE TABLE workspace_trust (
    project     TEXT PRIMARY KEY NOT NULL,
    trusted_at  INTEGER NOT NULL
);
