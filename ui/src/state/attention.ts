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
}

export class AttentionStore {
  private state: AttentionState = { asks: [], running: new Map() };
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
        if (s.running.get(e.session_id) === true) return null;
        this.set({ ...s, running: new Map(s.running).set(e.session_id, true) });
        return null;
      }
      case "turn_finished": {
        // A finished turn has no open asks left (a stop cancels them).
        const asks = s.asks.filter((a) => a.session_id !== e.session_id);
        if (s.running.get(e.session_id) === false && asks.length === s.asks.length) return null;
        this.set({ ...s, asks, running: new Map(s.running).set(e.session_id, false) });
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
