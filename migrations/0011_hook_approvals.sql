-- The project hook set a person approved (docs/configuration.md#hooks): a
-- project's hooks run only while the hash of its hooks equals the one
-- pinned here when the workspace was trusted; a changed set asks again.
CREATE TABLE hook_approvals (
    project TEXT PRIMARY KEY NOT NULL,
    hash TEXT NOT NULL,
    approved_at INTEGER NOT NULL
);
