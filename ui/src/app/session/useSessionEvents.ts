import { useCallback, useEffect } from "react";
import type { Event } from "../../protocol/generated";
import type { LiveSession } from "../../state/liveSessions";
import { useServices } from "../context";

/** The project's files for @-completion, per folder (read once, again after a turn). */
const filesCache = new Map<string, Promise<string[]>>();

/**
 * What a session view does on its session's events (the store applies them on its own; the
 * session list is made stale by the same events in state/queries.ts): notify, list the files
 * afresh after a turn, load again after a compaction; `onSteps` when the session's steps changed.
 */
export function useSessionEvents(live: LiveSession, sessionId: string, onSteps: () => void) {
  const { transport, platform } = useServices();
  useEffect(() => {
    const sideEffects = (e: Event) => {
      switch (e.type) {
        case "permission_asked":
          platform.notify("Mia Code needs permission", `${e.request.tool} ${e.request.target}`);
          break;
        case "turn_finished":
          if (e.session_id !== sessionId) break;
          // The agent may have created or removed files: @-completion lists them afresh.
          filesCache.clear();
          platform.notify("Mia Code", `Turn finished (${e.end})`);
          onSteps();
          break;
        case "snapshot":
        case "message_stored":
        case "subagent_finished":
          onSteps();
          break;
        case "compaction_finished":
          // The messages it replaced left the session's list: load it as the store has it now.
          onSteps();
          void live.load();
          break;
        default:
      }
    };
    return transport.subscribe(sessionId, sideEffects);
  }, [live, platform, sessionId, transport, onSteps]);
}

/** The files of `directory` for @-completion (cached until a turn finishes). */
export function useProjectFiles(directory: string) {
  const { api } = useServices();
  return useCallback(() => {
    let p = filesCache.get(directory);
    if (!p) {
      p = api.files(directory);
      filesCache.set(directory, p);
      p.catch(() => filesCache.delete(directory));
    }
    return p;
  }, [api, directory]);
}
