import { act, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

// React's startTransition, counted: the hook must hand streamed changes to it and nothing else.
const transitions = vi.hoisted(() => ({ count: 0 }));
vi.mock("react", async (original) => {
  const react = await original<typeof import("react")>();
  return {
    ...react,
    startTransition: (fn: () => void) => {
      transitions.count++;
      react.startTransition(fn);
    },
  };
});

import { SessionStore, useSessionState } from "./store";

const S = "s1";
const started = { type: "step_started" as const, session_id: S, message_id: "m1", agent: "build", model: "m" };
const delta = (text: string) => ({ type: "text_delta" as const, session_id: S, message_id: "m1", text });

function Shown({ store }: { store: SessionStore | null }) {
  const state = useSessionState(store);
  const part = state?.live[0]?.parts[0]?.content;
  return (
    <div data-testid="shown">
      {state === null ? "no store" : `${state.running ? "running" : "idle"}:${part?.type === "text" ? part.text : ""}`}
    </div>
  );
}

afterEach(() => {
  transitions.count = 0;
});

describe("useSessionState", () => {
  it("renders a session's streamed events as a transition and a local change at once", async () => {
    const frames: (() => void)[] = [];
    const store = new SessionStore(S, (cb) => frames.push(cb));
    render(<Shown store={store} />);
    expect(screen.getByTestId("shown").textContent).toBe("idle:");

    // Events: applied to the store at once, drawn in the next frame, as a transition.
    store.dispatch(started);
    store.dispatch(delta("Hello"));
    store.dispatch(delta(", world"));
    expect(screen.getByTestId("shown").textContent).toBe("idle:");
    expect(transitions.count).toBe(0);
    await act(() => {
      frames.shift()!();
      return Promise.resolve();
    });
    expect(transitions.count).toBe(1);
    expect(screen.getByTestId("shown").textContent).toBe("running:Hello, world");

    // A local change (and a load) is not a transition: it is drawn in the same task.
    act(() => store.update((s) => ({ ...s, running: false })));
    expect(transitions.count).toBe(1);
    expect(screen.getByTestId("shown").textContent).toBe("idle:Hello, world");
  });

  it("shows what changed before it subscribed, and another store's state when given one", async () => {
    const a = new SessionStore(S, (cb) => cb());
    a.dispatch(started);
    a.dispatch(delta("before"));
    const b = new SessionStore("s2", (cb) => cb());
    const { rerender } = render(<Shown store={a} />);
    expect(screen.getByTestId("shown").textContent).toBe("running:before");
    rerender(<Shown store={b} />);
    expect(screen.getByTestId("shown").textContent).toBe("idle:");
    // The old store is no longer listened to.
    await act(() => {
      a.dispatch(delta(" and after"));
      return Promise.resolve();
    });
    expect(screen.getByTestId("shown").textContent).toBe("idle:");
    rerender(<Shown store={null} />);
    expect(screen.getByTestId("shown").textContent).toBe("no store");
  });
});
