import { useCallback, useSyncExternalStore } from "react";
import type { LiveSession } from "../../state/liveSessions";
import { isCompacting } from "../../state/session";
import { useToast } from "../context";
import { restoreDraft } from "../PromptInput";

/**
 * Sending: a message typed while a turn runs is queued (and sent, oldest first, as turns
 * complete) by the live session; none is sent while the conversation is compacted. `queued` is
 * the queue; `edit` takes one back into the input (`onEdit` remounts it with the draft).
 */
export function useSend(live: LiveSession, sessionId: string, onEdit: () => void) {
  const toast = useToast();
  const { store, followUps } = live;
  const queued = useSyncExternalStore(followUps.subscribe, followUps.getSnapshot);
  const send = useCallback(
    async (text: string): Promise<boolean> => {
      if (store.getState().running) {
        followUps.add(text);
        return true;
      }
      if (isCompacting(store.getState())) {
        toast("The conversation is being compacted: send your message once it has finished.", "info");
        return false;
      }
      return live.start(text);
    },
    [followUps, live, store, toast],
  );
  const sendQueued = () => void live.sendNext();
  const editQueued = (i: number) => {
    const text = followUps.take(i);
    if (text === undefined) return;
    restoreDraft(sessionId, text);
    onEdit();
  };
  return { queued, send, sendQueued, editQueued, cancelQueued: (i: number) => followUps.take(i) };
}
