import type { Event, Message } from "../protocol/generated";
import { errorMessage, type Api } from "../lib/api";
import type { StreamState, Transport } from "../transport/types";
import { FollowUps } from "./followUps";
import { SessionLoader } from "./loader";
import { isCompacting } from "./session";
import { SessionStore } from "./store";

/** The error kind of a session that could not be loaded (its view offers to load it again). */
export const LOAD_FAILED = "load";

/** What a compaction marker shows while its session is cached: the summary open, the archive open and loaded. */
export interface MarkerMemory {
  summary: boolean;
  archive: boolean;
  messages?: Message[];
}

/**
 * A session kept current outside React: its store listens to the window's
 * stream from creation on, so switching back to it shows it at once, as it
 * is now, without loading it again.
 */
export class LiveSession {
  readonly store: SessionStore;
  /** What its compaction markers show, for as long as it is cached. */
  readonly markers = new Map<string, MarkerMemory>();
  /** Follow-ups typed while a turn runs (sent one by one as turns complete, on screen or not). */
  readonly followUps = new FollowUps();
  /** A turn completed and its queued follow-up has not gone out yet (waits for a load or a compaction). */
  private afterTurn = false;
  private readonly loader: SessionLoader;
  private opened = false;
  private stale = true;
  private first: Promise<void>;
  private resolveFirst: () => void = () => undefined;
  private readonly stop: () => void;
  private readonly timer: ReturnType<typeof setTimeout>;
  /** Views showing it (a shown session loads at once when the stream says so). */
  viewers = 0;

  constructor(
    readonly id: string,
    private readonly api: Api,
    transport: Transport,
    private readonly onError: (e: unknown) => void,
  ) {
    this.store = new SessionStore(id);
    this.loader = new SessionLoader(this.store, () => this.api.session(this.id), {
      loaded: () => {
        this.stale = false;
        this.flush();
      },
      failed: (e) => {
        // Never loaded: the view says so (with a retry) instead of waiting forever.
        this.store.update((s) =>
          s.session
            ? s
            : { ...s, error: { kind: LOAD_FAILED, message: `Could not load this session: ${errorMessage(e)}`, retryable: true } },
        );
        this.onError(e);
      },
    });
    this.first = new Promise((r) => (this.resolveFirst = r));
    // Subscribe first, then load (so nothing falls between).
    this.stop = transport.subscribe(
      id,
      (e) => {
        this.loader.event(e);
        this.onEvent(e);
      },
      (s) => this.onState(s),
    );
    // Some transports never report "open" (or report it late): do not wait forever.
    this.timer = setTimeout(() => this.onState("open"), 1500);
  }

  /** Resolves once it has loaded for the first time. */
  ready(): Promise<void> {
    return this.first;
  }

  /** Loaded, and nothing since said it may be out of date. */
  get current(): boolean {
    return !this.stale;
  }

  private onState(s: StreamState) {
    if (s !== "open" && s !== "lagged") return;
    if (!this.opened) {
      this.opened = true;
      clearTimeout(this.timer);
      void this.load().then(this.resolveFirst);
      return;
    }
    this.stale = true;
    if (this.viewers > 0) void this.load();
  }

  /** Loads the session (see SessionLoader: events that arrive meanwhile are applied on top). */
  async load(): Promise<void> {
    await this.loader.load();
  }

  /**
   * Starts a turn with `text` (the store shows it running at once). Resolves to whether the
   * runtime took it; why not goes to the session's error handler.
   */
  async start(text: string): Promise<boolean> {
    this.afterTurn = false;
    this.store.update((s) => ({ ...s, running: true, error: null }));
    try {
      await this.api.send(this.id, text);
      return true;
    } catch (e) {
      this.store.update((s) => ({ ...s, running: false }));
      this.onError(e);
      return false;
    }
  }

  /** Sends the oldest queued follow-up now ("Send now", or a completed turn); back at the head if it could not go. */
  async sendNext(): Promise<boolean> {
    const next = this.followUps.take();
    if (next === undefined) return false;
    const ok = await this.start(next);
    if (!ok) this.followUps.putBack(next);
    return ok;
  }

  private onEvent(e: Event) {
    if (e.type === "turn_finished" && e.session_id === this.id) this.afterTurn = e.end === "completed";
    this.flush();
  }

  /**
   * After a completed turn the oldest queued follow-up goes out, once the store says the session
   * is idle and not compacting. After a Stop or an error the queue waits (shown, with "Send now"):
   * nothing is sent behind the person's back.
   */
  private flush() {
    if (!this.afterTurn || this.followUps.size === 0) return;
    const s = this.store.getState();
    if (s.running || isCompacting(s)) return;
    this.afterTurn = false;
    void this.sendNext();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.stop();
  }
}

/** How many sessions' transcripts a window keeps live. */
export const LIVE_SESSIONS = 12;

/**
 * The window's sessions, kept live (every session's status is live anyway, from the window's
 * stream in AttentionStore; these are the ones whose whole transcript is kept): the last
 * `LIVE_SESSIONS` shown, the open one among them (least recently shown go first, never one on
 * screen). A day's work is ten sessions and more, switched between: each of them shows at once,
 * as it is now. What it costs is the transcripts' data (a 2,000-message session is a few MB of
 * JavaScript objects); only the open session is drawn.
 */
export class SessionCache {
  private readonly sessions = new Map<string, LiveSession>();

  constructor(
    private readonly api: Api,
    private readonly transport: Transport,
    private readonly max = LIVE_SESSIONS,
  ) {}

  /** The session, live (created, listening and loading when it was not cached). */
  get(id: string, onError: (e: unknown) => void): LiveSession {
    let s = this.sessions.get(id);
    if (s) {
      this.sessions.delete(id); // re-inserted: the most recently used last
    } else {
      s = new LiveSession(id, this.api, this.transport, onError);
    }
    this.sessions.set(id, s);
    this.evict();
    return s;
  }

  /**
   * A view shows it. A cached session is shown at once as its store has it; it loads again in
   * the background only when the session list says it changed since (`listedUpdatedAt`: another
   * process, e.g. `mia-code run`, continued it) or the list does not know it. Not while a turn
   * of this window's runtime runs in it: then every change reaches it as an Event, and no other
   * process can write to it (the turn holds the session's lease).
   */
  show(s: LiveSession, listedUpdatedAt?: number): void {
    s.viewers += 1;
    if (!this.sessions.has(s.id)) this.sessions.set(s.id, s);
    if (s.current) {
      const { session, running } = s.store.getState();
      const known = session?.updated_at ?? 0;
      if (!running && (listedUpdatedAt === undefined || listedUpdatedAt > known)) void s.load();
    } else {
      void s.ready().then(() => {
        if (!s.current) void s.load();
      });
    }
  }

  hide(s: LiveSession): void {
    s.viewers = Math.max(0, s.viewers - 1);
    this.evict();
  }

  /** How many sessions are kept (for tests). */
  get size(): number {
    return this.sessions.size;
  }

  dispose(): void {
    for (const s of this.sessions.values()) s.dispose();
    this.sessions.clear();
  }

  private evict() {
    for (const [id, s] of this.sessions) {
      if (this.sessions.size <= this.max) return;
      if (s.viewers > 0 || s.followUps.size > 0) continue;
      s.dispose();
      this.sessions.delete(id);
    }
  }
}
