-- Forks copy thousands of parts in one transaction (issue: forks). The
-- UNIQUE (message_id, "index") constraint of `parts` already has an index
-- on exactly these columns; the second one only doubled every part write.
-- Migrations are forward-only: never edit a released file, add a new one.
DROP INDEX IF EXISTS idx_parts_message;
-- Messages are read in `seq` order (migration 0004); (session_id, seq)
-- serves every lookup (session_id, created_at) did.
DROP INDEX IF EXISTS idx_messages_session;
