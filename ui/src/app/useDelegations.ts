import { useEffect, useMemo, useRef } from "react";
import type { SessionDetail } from "../protocol/generated";
import type { SessionState } from "../state/session";
import type { SessionStore } from "../state/store";
import { isActive, TASK_TOOL } from "../lib/subagent";
import { ChildSessions } from "./childSessions";
import { useServices } from "./context";

/**
 * The subagents' sessions of a session's delegations: followed live while they run (their steps
 * show on the task cards); their asks and the answers to them reach the session's dialog. A
 * delegation still running when the session was opened (a reload) finds its child by the
 * child's `spawned_by`.
 */
export function useDelegations(sessionId: string, directory: string, store: SessionStore, state: SessionState): ChildSessions {
  const { api, transport } = useServices();
  const children = useMemo(
    () =>
      new ChildSessions(
        api,
        transport,
        (e) => {
          if (e.type === "permission_asked" || e.type === "permission_resolved") store.dispatch(e);
        },
        (d: SessionDetail) => {
          for (const request of d.pending_permissions ?? []) {
            const root = request.root_session_id ?? sessionId;
            store.dispatch({ type: "permission_asked", request: { ...request, root_session_id: root } });
          }
        },
      ),
    [api, sessionId, store, transport],
  );
  useEffect(() => () => children.dispose(), [children]);
  const runningChildren = useMemo(
    () =>
      Object.values(state.subagents)
        .flatMap((a) => (a.childId && isActive(a.status) && state.running ? [a.childId] : []))
        .sort()
        .join(" "),
    [state.subagents, state.running],
  );
  useEffect(() => {
    children.watch(runningChildren ? runningChildren.split(" ") : []);
  }, [children, runningChildren]);

  // Opened while a delegation runs (a reload): its child session is found by its `spawned_by`.
  const missingChildren = useMemo(() => {
    if (!state.running) return "";
    return Object.values(state.tools)
      // Calls this window saw start (startedAt) get subagent_started; only loaded ones are looked up.
      .filter(
        (t) => t.tool === TASK_TOOL && t.output === undefined && t.startedAt === undefined && !state.subagents[t.callId]?.childId,
      )
      .map((t) => t.callId)
      .sort()
      .join(" ");
  }, [state.running, state.tools, state.subagents]);
  const lookedUp = useRef(new Set<string>());
  useEffect(() => {
    const wanted = missingChildren.split(" ").filter((id) => id && !lookedUp.current.has(id));
    if (!wanted.length) return;
    for (const id of wanted) lookedUp.current.add(id);
    api.sessions(directory, false).then(
      (list) => {
        for (const c of Array.isArray(list) ? list : []) {
          const call = c.spawned_by?.call_id;
          if (!call || c.spawned_by?.session_id !== sessionId || !wanted.includes(call)) continue;
          store.update((x) => {
            if (x.subagents[call]?.childId) return x;
            const agent = c.agent ?? x.subagents[call]?.agent ?? "subagent";
            return {
              ...x,
              subagents: {
                ...x.subagents,
                [call]: { ...x.subagents[call], callId: call, agent, status: "running", childId: c.id, description: c.title },
              },
            };
          });
        }
      },
      () => undefined,
    );
  }, [api, directory, missingChildren, sessionId, store]);

  return children;
}
