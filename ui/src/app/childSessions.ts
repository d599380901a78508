import type { Event, SessionDetail } from "../protocol/generated";
import type { Api } from "../lib/api";
import type { Transport } from "../transport/types";
import { SessionLoader } from "../state/loader";
import { SessionStore } from "../state/store";

interface Entry {
  store: SessionStore;
  /** Loads it, holding the events that arrive meanwhile. */
  loader: SessionLoader;
  /** Loaded at least once (or a load is under way). */
  requested: boolean;
  /** Unsubscribes from the child's events (while it runs). */
  stop: (() => void) | null;
}

/**
 * The subagent sessions of an open session's delegations: each one's state (what its task card
 * shows), loaded on demand, and followed live (subscribed to its events) while it runs. Events of a
 * child that matter to the parent (its permission asks and their answers) are passed on.
 */
export class ChildSessions {
  private readonly entries = new Map<string, Entry>();
  private disposed = false;

  constructor(
    private readonly api: Api,
    private readonly transport: Transport,
    /** Every event of a watched child (the parent takes its asks and answers). */
    private readonly onEvent: (e: Event) => void,
    /** A child's detail as loaded (its pending asks, after a reload). */
    private readonly onDetail?: (d: SessionDetail) => void,
  ) {}

  /** The child's store (created empty; {@link ensureLoaded} fills it). */
  store(id: string): SessionStore {
    return this.entry(id).store;
  }

  /** Loads the child once (a finished delegation's card opened). */
  ensureLoaded(id: string): void {
    const e = this.entry(id);
    if (!e.requested) void this.load(id);
  }

  /** Follows exactly these children live; one that stops being followed is loaded once more (its end). */
  watch(ids: readonly string[]): void {
    if (this.disposed) return;
    const wanted = new Set(ids);
    for (const [id, e] of this.entries) {
      if (e.stop && !wanted.has(id)) {
        e.stop();
        e.stop = null;
        void this.load(id);
      }
    }
    for (const id of wanted) {
      const e = this.entry(id);
      if (e.stop) continue;
      let opened = false;
      e.stop = this.transport.subscribe(
        id,
        (ev) => {
          e.loader.event(ev);
          this.onEvent(ev);
        },
        (s) => {
          if (s === "open" || s === "lagged") {
            opened = true;
            void this.load(id);
          }
        },
      );
      // Some transports never report "open": load anyway.
      setTimeout(() => {
        if (!opened && !e.requested) void this.load(id);
      }, 1500);
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const e of this.entries.values()) {
      e.stop?.();
      e.stop = null;
    }
  }

  private entry(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) {
      const store = new SessionStore(id);
      const entry: Entry = {
        store,
        loader: new SessionLoader(store, () => this.api.session(id), {
          loaded: (detail) => this.onDetail?.(detail),
          // The card says it could not load; the next event or load tries again.
          failed: () => (entry.requested = false),
          wanted: () => !this.disposed,
        }),
        requested: false,
        stop: null,
      };
      e = entry;
      this.entries.set(id, e);
    }
    return e;
  }

  private async load(id: string): Promise<void> {
    const e = this.entry(id);
    e.requested = true;
    await e.loader.load();
  }
}
