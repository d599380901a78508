-- `/model [AGENT] provider/model` (issue: agents, spec 016): the models a
-- person picked in a session, per agent, as a JSON object {agent: model}.
-- They rank right after a turn's own override.
-- Migrations are forward-only: never edit a released file, add a new one.
ALTER TABLE sessions ADD COLUMN agent_models TEXT CHECK (agent_models IS NULL OR json_valid(agent_models));
