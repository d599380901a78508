import { useCallback } from "react";
import type { PermissionReplyKind, RevertSummary, ShareRecord } from "../../protocol/generated";
import { isCompacting } from "../../state/session";
import type { LiveSession } from "../../state/liveSessions";
import { errorMessage } from "../../lib/api";
import { compactResultText } from "../../lib/compaction";
import { useServices, useToast } from "../context";

/**
 * What a session view does to its session through the server: fork, promote, compact, unshare
 * (asked first: `onUnshare` gets the share), switch the agent, set the model, report an
 * undo/redo, answer an ask, stop the turn. Each says what went wrong in a toast.
 */
export function useSessionActions({
  sessionId,
  live,
  onSessionsChanged,
  onOpenSession,
  ownChange,
  onUnshare,
  onPicked,
}: {
  sessionId: string;
  live: LiveSession;
  /** The session list changed (a fork, a promotion, a compaction). */
  onSessionsChanged: () => void;
  /** Opens a session (the new fork). */
  onOpenSession: (id: string) => void;
  /** This view changed the session (an undo): what it shows of the session's steps loads again. */
  ownChange: () => void;
  onUnshare: (record: ShareRecord) => void;
  /** An agent was picked (the picker closes). */
  onPicked: () => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const { store } = live;

  const fork = useCallback(
    async (messageId: string | null, withFiles: boolean) => {
      try {
        const r = await api.fork(sessionId, messageId, withFiles);
        toast(
          r.files ? `Forked with files into worktree ${r.files.worktree}: ${r.title}` : `Forked: ${r.title}`,
          "info",
        );
        if (r.files && r.files.left_out.length > 0) toast(`Not carried over: ${r.files.left_out.join("; ")}`, "info");
        onSessionsChanged();
        onOpenSession(r.id);
      } catch (e) {
        toast(errorMessage(e));
      }
    },
    [api, onOpenSession, onSessionsChanged, sessionId, toast],
  );

  const promote = useCallback(async () => {
    const s = store.getState().session;
    if (!s?.parent_id) {
      toast(
        s?.fork
          ? "This session is top-level already (it was promoted)."
          : "Not a fork: /promote makes a fork a top-level session. Fork first (/fork, or Fork from here in a message's ⋯ menu).",
        "info",
      );
      return;
    }
    try {
      const updated = await api.promoteFork(sessionId);
      store.update((x) => ({ ...x, session: updated }));
      toast(`Promoted: “${updated.title}” is a top-level session now`, "info");
      onSessionsChanged();
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, onSessionsChanged, sessionId, store, toast]);

  const compact = useCallback(async () => {
    const s = store.getState();
    if (s.running) {
      toast("A turn is running: /compact works once it has finished (or press Stop first).", "info");
      return;
    }
    if (isCompacting(s)) {
      toast("The conversation is being compacted already.", "info");
      return;
    }
    store.update((x) => ({ ...x, compaction: { state: "running", trigger: "manual" } }));
    try {
      const r = await api.compact(sessionId);
      store.update((x) => (x.compaction?.state === "running" ? { ...x, compaction: null } : x));
      toast(compactResultText(r), "info");
      await live.load();
      onSessionsChanged();
    } catch (e) {
      // 400 (nothing to compact, compaction off) and 409 (a turn runs) say what to do.
      store.update((x) => ({ ...x, compaction: { state: "failed", trigger: "manual", message: errorMessage(e) } }));
    }
  }, [api, live, onSessionsChanged, sessionId, store, toast]);

  // `/unshare`: this session's share, if it has one, is revoked once confirmed.
  const unshare = useCallback(async () => {
    try {
      const list = await api.shares();
      const record = (Array.isArray(list) ? list : []).find((r) => r.session_id === sessionId && !r.session_deleted);
      if (record) onUnshare(record);
      else toast("This session is not shared", "info");
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, onUnshare, sessionId, toast]);

  const switchTo = useCallback(
    async (agent: string) => {
      onPicked();
      const s = store.getState();
      if (agent === s.agent && !s.queuedAgent) return;
      const prev = { agent: s.agent, queuedAgent: s.queuedAgent };
      store.update((x) => (x.running ? { ...x, queuedAgent: agent } : { ...x, agent, queuedAgent: null }));
      try {
        await api.switchAgent(sessionId, agent);
      } catch (e) {
        store.update((x) => ({ ...x, ...prev }));
        toast(errorMessage(e));
      }
    },
    [api, onPicked, sessionId, store, toast],
  );

  const reportHistory = useCallback(
    (r: RevertSummary) => {
      if (r.applied) toast(r.message, "info");
      else
        toast(
          r.conflicts.length ? `Nothing changed: ${r.conflicts.map((c) => `${c.path} (${c.reason})`).join(", ")}` : r.message,
        );
      ownChange();
    },
    [toast, ownChange],
  );

  const setModel = useCallback(
    async (model: string | null) => {
      // The server says what is wrong with a reference (400): the caller shows it.
      const updated = await api.setModel(sessionId, model);
      if (updated && typeof updated === "object" && "id" in updated) store.update((x) => ({ ...x, session: updated }));
      else store.update((x) => (x.session ? { ...x, session: { ...x.session, model } } : x));
      toast(model ? `Model for this session: ${model}` : "Model: back to the defaults", "info");
    },
    [api, sessionId, store, toast],
  );

  const reply = useCallback(
    async (requestId: string, r: PermissionReplyKind) => {
      // A subagent's ask is answered in its own session (the child's id, not this one's).
      const target = store.getState().permissions.find((p) => p.id === requestId)?.session_id ?? sessionId;
      store.update((s) => ({ ...s, replies: { ...s.replies, [requestId]: r.kind } }));
      try {
        await api.reply(target, requestId, r);
      } catch (e) {
        toast(errorMessage(e));
        throw e;
      }
    },
    [api, sessionId, store, toast],
  );

  const stop = useCallback(async () => {
    try {
      await api.cancel(sessionId);
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, sessionId, toast]);

  return { fork, promote, compact, unshare, switchTo, reportHistory, setModel, reply, stop };
}
