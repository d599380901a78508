import type { Event } from "../protocol/generated";
import type { StreamCursor, StreamHello, StreamState, Transport } from "./types";

/** The session an Event belongs to (as the runtime numbers it), and the one it is also for. */
export function eventSession(e: Event): string | null {
  switch (e.type) {
    case "session_updated":
      return e.session.id;
    case "message_stored":
      return e.message.session_id;
    case "permission_asked":
      return e.request.session_id;
    case "worktree_log":
      return null;
    case "error":
    case "notice":
      return e.session_id ?? null;
    default:
      return e.session_id;
  }
}

/** A subagent's ask (and its answer) is also for the root session whose view shows it. */
export function eventAlsoFor(e: Event): string | null {
  if (e.type === "permission_asked") return e.request.root_session_id ?? null;
  if (e.type === "permission_resolved") return e.root_session_id ?? null;
  return null;
}

interface Listener {
  session: string | null;
  /** Told "open" once (it loaded); until then a resumed stream is still news to it. */
  opened: boolean;
  onEvent: (e: Event, seq?: number) => void;
  onState?: (s: StreamState) => void;
}

export type HubState = "connecting" | StreamState;

/**
 * One stream per window: every view's subscription (the open session, the
 * delegations it follows, the sidebar, the attention queue, the fork tree...)
 * is a listener on one upstream subscription of all sessions' Events.
 *
 * It remembers the last Event number of each session, so a lost connection
 * (or a stream that fell behind) resumes where it was: when the runtime could
 * resume it (same process, the missed Events still kept) the listeners hear
 * `resumed` and keep their state; otherwise the listeners of the sessions it
 * could not resume (all of them after a restart) hear `open` / `lagged` and
 * reload. An Event is never delivered twice.
 */
export class Multiplexer implements Transport {
  private readonly listeners = new Set<Listener>();
  private stop: (() => void) | null = null;
  private cursor: StreamCursor | null = null;
  private connected = false;
  /** The first hello after a connection (re)opened decides what listeners hear. */
  private reconnecting = false;
  private state: HubState = "connecting";
  private readonly stateListeners = new Set<(s: HubState) => void>();

  constructor(private readonly base: Transport) {}

  request: Transport["request"] = (method, path, body) => this.base.request(method, path, body);

  reconnect = (): void => this.base.reconnect?.();

  subscribe(
    sessionId: string | null,
    onEvent: (e: Event, seq?: number) => void,
    onState?: (s: StreamState) => void,
  ): () => void {
    const l: Listener = { session: sessionId, onEvent, onState, opened: false };
    this.listeners.add(l);
    if (!this.stop) this.start();
    else if (this.connected) queueMicrotask(() => this.listeners.has(l) && this.open(l));
    return () => {
      this.listeners.delete(l);
    };
  }

  /** Where the window stands (for the connection banner). */
  getState = (): HubState => this.state;

  onStateChange(fn: (s: HubState) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  /** The last Event number applied of `session` (0: none yet). */
  seq(session: string): number {
    return this.cursor?.seqs[session] ?? 0;
  }

  /** Closes the upstream stream (the window goes away). */
  close(): void {
    this.stop?.();
    this.stop = null;
  }

  private setState(s: HubState) {
    this.state = s;
    for (const fn of this.stateListeners) fn(s);
  }

  private start() {
    this.stop = this.base.subscribe(
      null,
      (e, seq) => this.deliver(e, seq),
      (s) => {
        if (s === "reconnecting") {
          this.connected = false;
          this.reconnecting = true;
          this.setState("reconnecting");
          for (const l of this.listeners) l.onState?.("reconnecting");
        } else if (s === "lagged") {
          // A transport that cannot resume: everyone reloads.
          for (const l of this.listeners) l.onState?.("lagged");
        }
        // "open" waits for the hello, which says what the listeners must do.
      },
      { resume: () => this.cursor, onHello: (h) => this.hello(h) },
    );
  }

  private hello(h: StreamHello) {
    const first = !this.connected && !this.reconnecting;
    const wasReconnecting = this.reconnecting;
    this.connected = true;
    this.reconnecting = false;
    if (h.reset === "all" || !this.cursor || this.cursor.epoch !== h.epoch) {
      // Another process (or the first connection): numbers start afresh; everything loads.
      this.cursor = { epoch: h.epoch, seqs: {} };
      this.setState("open");
      for (const l of this.listeners) this.open(l);
      return;
    }
    const lost = new Set(h.reset === "none" ? [] : h.reset);
    for (const id of lost) delete this.cursor.seqs[id];
    this.setState(first || !wasReconnecting ? "open" : "resumed");
    for (const l of this.listeners) {
      // One that came while the stream was down has not loaded yet.
      if (!l.opened) {
        this.open(l);
        continue;
      }
      const reload = l.session === null ? lost.size > 0 : lost.has(l.session);
      l.onState?.(reload ? "lagged" : "resumed");
    }
  }

  private open(l: Listener) {
    l.opened = true;
    l.onState?.("open");
  }

  private deliver(e: Event, seq?: number) {
    const session = eventSession(e);
    if (session && seq && this.cursor) {
      const last = this.cursor.seqs[session] ?? 0;
      if (seq <= last) return; // already delivered (an overlapping reconnect)
      this.cursor.seqs[session] = seq;
    }
    const also = eventAlsoFor(e);
    for (const l of this.listeners) {
      if (l.session === null || l.session === session || (also !== null && l.session === also)) l.onEvent(e, seq);
    }
  }
}
