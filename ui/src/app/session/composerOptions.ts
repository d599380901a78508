import { useMemo } from "react";
import type { AgentInfo } from "../../protocol/generated";

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
