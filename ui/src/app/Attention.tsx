import { useCallback, useEffect, useSyncExternalStore } from "react";
import type { PermissionReplyKind, PermissionRequest } from "../protocol/generated";
import { PermissionDialog } from "../components/permission/PermissionDialog";
import { AttentionStore, type AttentionState } from "../state/attention";
import { errorMessage } from "../lib/api";
import { useServices, useToast } from "./context";
import { Flag } from "lucide-react";

export function useAttention(store: AttentionStore): AttentionState {
  return useSyncExternalStore(store.subscribe, store.getState);
}

/** The key that opens the attention queue from anywhere. */
export function isAttentionShortcut(e: KeyboardEvent): boolean {
  return (e.ctrlKey || e.metaKey) && e.shiftKey && e.key.toLowerCase() === "a";
}

/** "2 waiting": asks in sessions other than the open one. Hidden when there are none. */
export function AttentionBadge({ count, onOpen }: { count: number; onOpen: () => void }) {
  if (count === 0) return null;
  return (
    <button
      type="button"
      className="btn attention-badge"
      data-testid="attention-badge"
      onClick={onOpen}
      title="Permission asks waiting in other sessions (Ctrl+Shift+A)"
      aria-label={`${count} permission ${count === 1 ? "ask" : "asks"} waiting in other sessions`}
    >
      <Flag size={14} aria-hidden /> {count} waiting
    </button>
  );
}

/**
 * The attention queue: every waiting ask of the other sessions, answered here in order (oldest
 * first) without opening them. Closes itself when the queue is empty.
 */
export function AttentionQueue({
  asks,
  sessionTitle,
  onClose,
}: {
  asks: PermissionRequest[];
  sessionTitle: (id: string) => string | undefined;
  onClose: () => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const reply = useCallback(
    async (requestId: string, r: PermissionReplyKind) => {
      const ask = asks.find((a) => a.id === requestId);
      if (!ask) return;
      try {
        // A subagent's ask is answered in its own session.
        await api.reply(ask.session_id, requestId, r);
      } catch (e) {
        toast(errorMessage(e));
        throw e;
      }
    },
    [api, asks, toast],
  );
  useEffect(() => {
    if (asks.length === 0) onClose();
  }, [asks.length, onClose]);
  if (asks.length === 0) return null;
  return (
    <PermissionDialog
      requests={asks}
      onReply={reply}
      sessionLabel={(r) => sessionTitle(r.root_session_id ?? r.session_id) ?? r.session_id.slice(0, 8)}
      overlayTestId="attention-queue"
    />
  );
}
