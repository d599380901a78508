-- "Always for this project" approvals record the agent that was asked: an
-- approval given in build applies to build only. Approvals stored before
-- this column existed were almost always given in the default agent; they
-- are kept for `build` (another agent asks again, which is the safe side).
ALTER TABLE permission_approvals ADD COLUMN agent TEXT NOT NULL DEFAULT 'build';
DROP INDEX idx_permission_approvals_rule;
CREATE UNIQUE INDEX idx_permission_approvals_rule
    ON permission_approvals(project, agent, permission, ifnull(pattern, ''), action);
