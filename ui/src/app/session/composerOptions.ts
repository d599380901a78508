import { useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import type { AgentInfo, CommandInfo, CommandList } from "../../protocol/generated";
import { keys } from "../../state/queries";
import { useServices } from "../context";

/** The agents `@name` delegates to (the composer's @ popup lists them above the files). */
export function useMentionAgents(agents: AgentInfo[]) {
  return useMemo(
    () =>
      agents
        .filter((a) => a.mode === "subagent" || a.mode === "all")
        .map((a) => ({ name: a.name, description: a.description })),
    [agents],
  );
}

/** The `/` commands that do not apply to the session now, with why (listed greyed; running one explains). */
export function useDisabledCommands(parent: string | null, running: boolean, compacting: boolean) {
  return useMemo(() => {
    const d: Partial<Record<string, string>> = {};
    if (!parent) d.promote = "only a fork can be promoted";
    if (running) d.compact = "a turn is running: wait for it to finish";
    else if (compacting) d.compact = "compacting already";
    return d;
  }, [parent, running, compacting]);
}

const NO_COMMANDS: CommandInfo[] = [];

/** The commands of an answer that may not be one (a server without the route answers otherwise). */
function commandsOf(list: CommandList | undefined | null): CommandInfo[] {
  return Array.isArray(list?.commands) ? list.commands : NO_COMMANDS;
}

/**
 * The project's custom slash commands (`GET /api/commands`), the unusable ones included (with
 * why): the composer's / menu lists them after the built-ins. Read again when the window gets the
 * focus back (a file written in an editor) and when a turn ends (one the agent wrote); none while
 * they load or when they cannot be read.
 */
export function useCustomCommands(directory: string): CommandInfo[] {
  const { api } = useServices();
  const query = useQuery({
    queryKey: keys.commands(directory),
    queryFn: async () => commandsOf(await api.commands(directory)),
    enabled: directory !== "",
    staleTime: 5_000,
  });
  return query.data ?? NO_COMMANDS;
}
