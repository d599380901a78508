-- Subagent delegation (issue: agents, spec 015). A session a `task` call
-- started records who spawned it: {"session_id", "call_id", "agent"} of the
-- parent. It is a different relation from a fork (`parent_id` + `fork`):
-- fork trees stay trees of the user's attempts.
-- Migrations are forward-only: never edit a released file, add a new one.
ALTER TABLE sessions ADD COLUMN spawned_by TEXT CHECK (spawned_by IS NULL OR json_valid(spawned_by));
CREATE INDEX idx_sessions_spawned_by ON sessions(json_extract(spawned_by, '$.session_id')) WHERE spawned_by IS NOT NULL;
