import { useMemo } from "react";
import type { LiveSession } from "../../state/liveSessions";
import { toolTarget } from "../../lib/format";
import type { ChildSessions } from "../childSessions";
import { useServices } from "../context";
import type { MessageActions } from "../MessageView";
import type { DiffTarget } from "./SessionDialogs";

/**
 * What the conversation's messages can do in a session view: show a step's or a message's diff,
 * retry, fork, open a session (the fork marker's parent), name one, open a compaction's archive,
 * and reach a delegation's subagent session.
 */
export function useMessageActions({
  sessionId,
  live,
  children,
  onDiff,
  retry,
  fork,
  openSession,
  sessionTitle,
}: {
  sessionId: string;
  live: LiveSession;
  children: ChildSessions;
  onDiff: (target: DiffTarget) => void;
  retry: () => void;
  fork: (messageId: string | null, withFiles: boolean) => Promise<void>;
  openSession: (id: string, messageId?: string) => void;
  sessionTitle: (id: string) => string | undefined;
}): MessageActions {
  const { api } = useServices();
  const { store, markers } = live;
  return useMemo(
    () => ({
      onDiffStep: (callId) => {
        const info = store.getState().tools[callId];
        onDiff({ title: `Diff: ${info?.tool ?? "step"} ${toolTarget(info?.input)}`.trim(), scope: { step: callId } });
      },
      onDiffMessage: (messageId) => onDiff({ title: "Diff of this message", scope: { message: messageId } }),
      onRetry: retry,
      onFork: (messageId, withFiles) => void fork(messageId, withFiles),
      onOpenSession: openSession,
      sessionTitle,
      loadArchived: async (summaryId) => {
        const d = await api.sessionWithArchive(sessionId);
        return d.messages.filter((m) => m.compacted_by === summaryId);
      },
      markers,
      childSession: (id) => children.store(id),
      loadChild: (id) => children.ensureLoaded(id),
    }),
    [api, children, fork, markers, onDiff, openSession, retry, sessionId, sessionTitle, store],
  );
}
