import { useEffect, useEffectEvent, useMemo, useState } from "react";
import type { Event as RuntimeEvent, PermissionRequest } from "../../protocol/generated";
import { AttentionStore } from "../../state/attention";
import { useAttention } from "../Attention";
import { useServices, useToast } from "../context";

/** How long failed reconnects show as "reconnecting…" before the banner says the connection is lost. */
export const LOST_AFTER_MS = 15_000;

/**
 * Every session of the project, live: the asks waiting anywhere (`elsewhere`: those of other
 * sessions than the open one) and which sessions run. The server's list (filtered by project) is
 * the truth; events say when to read it again. Also the window's stream to the runtime
 * (`connection`) and the runtime's notices (toasts).
 */
export function useWindowAttention({
  project,
  currentId,
  sessionOpen,
  sessionTitle,
  openSession,
}: {
  project: string | null;
  currentId: string | null;
  /** The open session is on screen (not another view). */
  sessionOpen: boolean;
  sessionTitle: (id: string) => string | undefined;
  openSession: (id: string) => void;
}) {
  const { api, transport, platform } = useServices();
  const toast = useToast();
  const attention = useMemo(() => new AttentionStore(), []);
  const live = useAttention(attention);
  /**
   * The window's stream to the runtime: open; reconnecting (with backoff); or lost, after
   * LOST_AFTER_MS of failed retries (still retrying, and the user can retry now).
   */
  const [connection, setConnection] = useState<"open" | "reconnecting" | "lost">("open");
  useEffect(() => {
    if (connection !== "reconnecting") return;
    const t = setTimeout(() => setConnection("lost"), LOST_AFTER_MS);
    return () => clearTimeout(t);
  }, [connection]);
  const retryNow = () => {
    setConnection("reconnecting");
    transport.reconnect?.();
  };
  // A new ask in another session: tell the OS (the platform shows it only when this window is in
  // the background or unfocused; the open session's own asks are told by its view).
  const notifyFresh = useEffectEvent((asks: PermissionRequest[], before: Set<string>) => {
    const fresh = asks.filter(
      (a) => !before.has(a.id) && a.session_id !== currentId && a.root_session_id !== currentId,
    );
    const a = fresh[0];
    if (!a) return;
    const where = sessionTitle(a.root_session_id ?? a.session_id) ?? "another session";
    // Clicked: that session opens, with its ask.
    platform.notify("Mia Code needs you", `${a.agent} asks to use ${a.tool} in ${where}`, () =>
      openSession(a.root_session_id ?? a.session_id),
    );
  });
  // The runtime's notices (a plugin installing, skipped offline, disabled for a session): a neutral
  // toast that goes away by itself; one of another session names it.
  const showNotice = useEffectEvent((e: Extract<RuntimeEvent, { type: "notice" }>) => {
    const other = e.session_id && e.session_id !== currentId ? sessionTitle(e.session_id) : undefined;
    toast(other ? `${e.message} (in “${other}”)` : e.message, "notice");
  });
  useEffect(() => {
    if (!project) return;
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const seed = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const before = new Set(attention.getState().asks.map((a) => a.id));
        api.asks(project).then(
          (asks) => {
            if (!alive) return;
            const list = Array.isArray(asks) ? asks : [];
            attention.seed(list);
            notifyFresh(list, before);
          },
          () => undefined,
        );
      }, 30);
    };
    attention.seed([]);
    seed();
    const stop = transport.subscribe(
      null,
      (e) => {
        if (e.type === "permission_asked") seed();
        else if (e.type === "notice") showNotice(e);
        else attention.apply(e);
      },
      (st) => {
        if (st === "open" || st === "lagged") seed();
        if (st === "open" || st === "resumed") setConnection("open");
        else if (st === "reconnecting") setConnection((c) => (c === "lost" ? c : "reconnecting"));
      },
    );
    return () => {
      alive = false;
      if (timer) clearTimeout(timer);
      stop();
    };
  }, [api, attention, project, transport]);
  const elsewhere = useMemo(() => AttentionStore.elsewhere(live.asks, currentId), [live.asks, currentId]);
  // What the open session finishes is read; opening one reads what it finished.
  useEffect(() => {
    attention.setOpen(sessionOpen ? currentId : null);
  }, [attention, currentId, sessionOpen]);
  return { live, elsewhere, connection, retryNow };
}
