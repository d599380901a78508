import type { Event, SessionDetail } from "../protocol/generated";
import { reloaded } from "./session";
import type { SessionStore } from "./store";

/**
 * Loads a session into its store while its events keep arriving: events that arrive during a load
 * are held and applied on top of it, so none falls between the load and the stream. One load at a
 * time: one asked for while another runs runs once more after it (it may have missed a change).
 * Shared by the window's live sessions and the subagent sessions of a delegation.
 */
export class SessionLoader {
  private held: Event[] | null = null;
  private loading: Promise<boolean> | null = null;
  private again = false;

  constructor(
    private readonly store: SessionStore,
    private readonly fetch: () => Promise<SessionDetail>,
    private readonly on: {
      /** A load went through (the store has it). */
      loaded?: (detail: SessionDetail) => void;
      /** A load failed (the store keeps what it had). */
      failed?: (e: unknown) => void;
      /** Whether a finished load is still wanted (false once its owner is gone). */
      wanted?: () => boolean;
    } = {},
  ) {}

  /** One event of the session, from its stream: held while a load runs, applied otherwise. */
  event(e: Event): void {
    if (this.held) this.held.push(e);
    else this.store.dispatch(e);
  }

  /** Whether a load is under way. */
  get busy(): boolean {
    return this.loading !== null;
  }

  /** Loads the session; resolves to whether the last load went through. */
  load(): Promise<boolean> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    const run = async () => {
      let ok = false;
      do {
        this.again = false;
        this.held = [];
        try {
          const detail = await this.fetch();
          if (this.on.wanted && !this.on.wanted()) return false;
          this.store.set(reloaded(detail, this.store.getState()));
          ok = true;
          this.on.loaded?.(detail);
        } catch (e) {
          ok = false;
          this.on.failed?.(e);
        } finally {
          const queued = this.held ?? [];
          this.held = null;
          for (const e of queued) this.store.dispatch(e);
        }
      } while (this.again);
      return ok;
    };
    const done = run().finally(() => {
      if (this.loading === done) this.loading = null;
    });
    this.loading = done;
    return done;
  }
}
