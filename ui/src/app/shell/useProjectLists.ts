import { useCallback, useEffect, useMemo } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { AgentInfo, SessionSummary } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";

const NO_SESSIONS: SessionSummary[] = [];
const BUSY_POLL_MS = 4000;
const NO_AGENTS: AgentInfo[] = [];

/**
 * The open project's sessions (archived ones too with `showArchived`) and agents, and the
 * sessions' titles by id. A failed read is said in a toast.
 */
export function useProjectLists(project: string | null, showArchived: boolean) {
  const { api } = useServices();
  const toast = useToast();
  // The project's sessions and agents: cached, made stale by Events (state/queries.ts).
  const queryClient = useQueryClient();
  const sessionsQuery = useQuery({
    queryKey: keys.sessions(project ?? "", showArchived),
    queryFn: () => api.sessions(project ?? "", showArchived),
    enabled: project !== null,
    // A turn this window does not hear (run by another process, e.g. `mia-code run`) shows
    // only in the store: while any session is busy, the list is read again every few seconds
    // (not while the window is hidden), so its "running" ends when that turn does.
    refetchInterval: (q) => ((q.state.data ?? []).some((x) => x.status === "busy") ? BUSY_POLL_MS : false),
  });
  const sessions = sessionsQuery.data ?? NO_SESSIONS;
  const agentsQuery = useQuery({
    queryKey: keys.agents(project ?? ""),
    queryFn: () => api.agents(project ?? ""),
    enabled: project !== null,
  });
  const agents = agentsQuery.data ?? NO_AGENTS;
  const failed = sessionsQuery.error ?? agentsQuery.error;
  useEffect(() => {
    if (failed) toast(errorMessage(failed));
  }, [failed, toast]);
  const refreshSessions = useCallback(
    (): Promise<void> =>
      project ? queryClient.invalidateQueries({ queryKey: keys.sessionsOf(project) }) : Promise.resolve(),
    [project, queryClient],
  );
  // Session titles by id: a new function only when a title changes (not with every list read,
  // which would render the open session's view again for nothing).
  const titleList = useMemo(() => JSON.stringify(sessions.map((s) => [s.id, s.title || s.slug])), [sessions]);
  const sessionTitle = useMemo(() => {
    const titles = new Map(JSON.parse(titleList) as [string, string][]);
    return (id: string) => titles.get(id);
  }, [titleList]);
  return { sessionsQuery, sessions, agents, refreshSessions, sessionTitle };
}
