import { useSyncExternalStore } from "react";
import type { Event } from "../protocol/generated";
import { applyEvent, emptySession, type SessionState } from "./session";

type Frame = (cb: () => void) => unknown;

const defaultFrame: Frame =
  typeof requestAnimationFrame === "function" ? (cb) => requestAnimationFrame(cb) : (cb) => setTimeout(cb, 16);

/**
 * Holds the open session. Events are applied at once (the state is always
 * current) but subscribers are told at most once per animation frame, so a
 * burst of deltas costs one render.
 */
export class SessionStore {
  private state: SessionState;
  private readonly listeners = new Set<() => void>();
  private pending = false;

  constructor(
    id: string,
    private readonly frame: Frame = defaultFrame,
  ) {
    this.state = emptySession(id);
  }

  getState = (): SessionState => this.state;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  dispatch(e: Event): void {
    const next = applyEvent(this.state, e);
    if (next === this.state) return;
    this.state = next;
    this.schedule();
  }

  /** Replaces the state (a load) and tells subscribers now. */
  set(next: SessionState): void {
    this.state = next;
    this.notify();
  }

  update(fn: (s: SessionState) => SessionState): void {
    const next = fn(this.state);
    if (next === this.state) return;
    this.state = next;
    this.notify();
  }

  private schedule() {
    if (this.pending) return;
    this.pending = true;
    this.frame(() => {
      this.pending = false;
      this.notify();
    });
  }

  private notify() {
    for (const l of this.listeners) l();
  }
}

export function useSessionState(store: SessionStore): SessionState {
  return useSyncExternalStore(store.subscribe, store.getState, store.getState);
}
