import type { Event, PermissionRequest } from "../protocol/generated";

/**
 * What needs a person across every session of the open project, kept outside React so it survives
 * switching sessions: the pending permission asks (subagents' included) and which sessions are
 * running a turn. Fed by the window's stream of all sessions' events and seeded (on open and after
 * a reconnect) from `GET /api/asks`.
 */
export interface AttentionState {
  /** Pending asks, oldest first. */
  asks: PermissionRequest[];
  /**
   * Whether a session runs a turn, for the sessions the events spoke about since the window opened
   * (a subagent's too); the others' state is the session list's.
   */
  running: ReadonlyMap<string, boolean>;
  /**
   * Sessions whose turn ended while nobody was looking at them, until they are opened:
   * `failed` (an error, a step limit, blocked) or `done` (finished, unread).
   */
  finished: ReadonlyMap<string, "done" | "failed">;
}

export class AttentionStore {
  private state: AttentionState = { asks: [], running: new Map(), finished: new Map() };
  /** The session on screen (its turns end read). */
  private open: string | null = null;
  private listeners = new Set<() => void>();

  getState = (): AttentionState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(next: AttentionState) {
    if (next === this.state) return;
    this.state = next;
    for (const l of this.listeners) l();
  }

  /** The session on screen: what it finished is read. */
  setOpen(id: string | null) {
    this.open = id;
    if (id && this.state.finished.has(id)) {
      const finished = new Map(this.state.finished);
      finished.delete(id);
      this.set({ ...this.state, finished });
    }
  }

  /** The server's list replaces what the events said (after a reload or a lost stream). */
  seed(asks: PermissionRequest[]) {
    const sorted = [...asks].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.set({ ...this.state, asks: sorted });
  }

  /** Apply one event; returns the ask it added, if any (for a notification). */
  apply(e: Event): PermissionRequest | null {
    const s = this.state;
    switch (e.type) {
      case "permission_asked": {
        if (s.asks.some((a) => a.id === e.request.id)) return null;
        this.set({ ...s, asks: [...s.asks, e.request] });
        return e.request;
      }
      case "permission_resolved": {
        if (!s.asks.some((a) => a.id === e.request_id)) return null;
        this.set({ ...s, asks: s.asks.filter((a) => a.id !== e.request_id) });
        return null;
      }
      case "session_updated": {
        const busy = e.session.status === "busy" || e.session.status === "compacting";
        if (s.running.get(e.session.id) === busy) return null;
        this.set({ ...s, running: new Map(s.running).set(e.session.id, busy) });
        return null;
      }
      case "step_started": {
        if (s.running.get(e.session_id) === true && !s.finished.has(e.session_id)) return null;
        // A new turn: what the last one ended with is no longer news.
        const finished = new Map(s.finished);
        finished.delete(e.session_id);
        this.set({ ...s, finished, running: new Map(s.running).set(e.session_id, true) });
        return null;
      }
      case "turn_finished": {
        // A finished turn has no open asks left (a stop cancels them).
        const asks = s.asks.filter((a) => a.session_id !== e.session_id);

        // Read at once when on screen.
        const unseen = e.session_id !== this.open;
        const finished = unseen
          ? new Map(s.finished).set(e.session_id, e.end === "completed" || e.end === "cancelled" ? "done" : "failed")
          : s.finished;
        this.set({ ...s, asks, finished, running: new Map(s.running).set(e.session_id, false) });
        return null;
      }
      default:
        return null;
    }
  }

  /** Asks that belong to `sessionId`: its own and its subagents' (they show in its dialog). */
  static of(asks: PermissionRequest[], sessionId: string): PermissionRequest[] {
    return asks.filter((a) => a.session_id === sessionId || a.root_session_id === sessionId);
  }

  /** Asks of every session but `current` (and its subagents): what waits elsewhere. */
  static elsewhere(asks: PermissionRequest[], current: string | null): PermissionRequest[] {
    return current ? asks.filter((a) => a.session_id !== current && a.root_session_id !== current) : asks;
  }
}
