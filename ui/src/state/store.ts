import { startTransition, useLayoutEffect, useState } from "react";
import type { Event } from "../protocol/generated";
import { applyEvent, emptySession, type SessionState } from "./session";

type Frame = (cb: () => void) => unknown;

const animationFrame: Frame =
  typeof requestAnimationFrame === "function" ? (cb) => requestAnimationFrame(cb) : (cb) => setTimeout(cb, 16);

/**
 * The least time between two frames that draw streamed events (about 20 a second). Each such
 * frame lays out and paints the followed bottom of the conversation again (25–35 ms in WebKit for
 * a long answer): drawn every animation frame, that work and the next frame's script ran back to
 * back and the main thread had no time left for the person typing. Text arriving 20 times a second
 * still reads as a stream.
 */
export const STREAM_FRAME_MS = 50;
let lastStreamFrame = Number.NEGATIVE_INFINITY;

/** An animation frame at least STREAM_FRAME_MS after the last one that drew streamed events (any session's). */
const streamFrame: Frame = (cb) => {
  const run = () =>
    animationFrame(() => {
      lastStreamFrame = performance.now();
      cb();
    });
  // The animation frame itself waits up to one frame more.
  const wait = lastStreamFrame + STREAM_FRAME_MS - 16 - performance.now();
  if (wait > 0) setTimeout(run, wait);
  else run();
};

/** A subscriber: `streamed` when what changed came from the session's events (see {@link useSessionState}). */
export type Listener = (streamed: boolean) => void;

/**
 * Holds the open session. Events are applied at once (the state is always
 * current) but subscribers are told at most once per animation frame, and
 * frames that draw streamed events come at most every STREAM_FRAME_MS, so a
 * burst of deltas costs one render. A load or a local change tells them now.
 */
export class SessionStore {
  private state: SessionState;
  private readonly listeners = new Set<Listener>();
  private pending = false;

  constructor(
    id: string,
    private readonly frame: Frame = streamFrame,
  ) {
    this.state = emptySession(id);
  }

  getState = (): SessionState => this.state;

  subscribe = (fn: Listener): (() => void) => {
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
      this.notify(true);
    });
  }

  private notify(streamed = false) {
    for (const l of this.listeners) l(streamed);
  }
}

/**
 * A session store's state for a component (null while there is no store). A load or a local
 * change renders at once; what the session's events changed renders as a transition, which
 * React renders in slices of a few milliseconds with the page's other work in between: a frame
 * of a long streamed answer (its markdown parsed, the conversation reconciled) never holds the
 * main thread for its whole render, so typing, the next events and the page's other timers go
 * on. A newer state replaces a transition not committed yet; nothing is drawn twice.
 */
export function useSessionState(store: SessionStore): SessionState;
export function useSessionState(store: SessionStore | null): SessionState | null;
export function useSessionState(store: SessionStore | null): SessionState | null {
  const [seen, setSeen] = useState(() => ({ store, state: store?.getState() ?? null }));
  useLayoutEffect(() => {
    if (!store) return;
    const take = () =>
      setSeen((prev) => {
        const state = store.getState();
        return prev.store === store && prev.state === state ? prev : { store, state };
      });
    // What changed between the render and this subscription.
    take();
    return store.subscribe((streamed) => (streamed ? startTransition(take) : take()));
  }, [store]);
  // A different store than the one last seen (a session switched to in the same view): its
  // state now, until the effect above has subscribed.
  return seen.store === store ? seen.state : (store?.getState() ?? null);
}
