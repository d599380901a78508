import { describe, expect, it } from "vitest";
import type { Event } from "../protocol/generated";
import { Multiplexer } from "./multiplex";
import type { StreamCursor, StreamHello, StreamOptions, StreamState, Transport } from "./types";

/** An upstream transport the test drives: hellos, numbered Events, lost connections. */
function upstream() {
  const subs: {
    session: string | null;
    onEvent: (e: Event, seq?: number) => void;
    onState?: (s: StreamState) => void;
    opts?: StreamOptions;
  }[] = [];
  const base: Transport = {
    request: () => Promise.reject(new Error("no requests here")),
    subscribe(session, onEvent, onState, opts) {
      subs.push({ session, onEvent, onState, opts });
      return () => undefined;
    },
  };
  const sub = () => subs.at(-1)!;
  return {
    base,
    subs,
    hello: (h: StreamHello) => sub().opts?.onHello?.(h),
    event: (e: Event, seq?: number) => sub().onEvent(e, seq),
    state: (s: StreamState) => sub().onState?.(s),
    cursor: (): StreamCursor | null => sub().opts?.resume?.() ?? null,
  };
}

const delta = (session: string, text: string): Event => ({ type: "text_delta", session_id: session, message_id: "m", text });

function listen(m: Multiplexer, session: string | null) {
  const events: string[] = [];
  const states: StreamState[] = [];
  const stop = m.subscribe(
    session,
    (e) => events.push(`${e.type === "text_delta" ? e.text : e.type}`),
    (s) => states.push(s),
  );
  return { events, states, stop };
}

describe("Multiplexer", () => {
  it("is one upstream stream of all sessions, fanned out by session (a subagent's ask also to its root)", async () => {
    const up = upstream();
    const m = new Multiplexer(up.base);
    const a = listen(m, "A");
    const b = listen(m, "B");
    const all = listen(m, null);
    expect(up.subs).toHaveLength(1);
    expect(up.subs[0]!.session).toBeNull();
    up.hello({ epoch: "E", reset: "all" });
    expect(a.states).toEqual(["open"]);
    up.event(delta("A", "a1"), 1);
    up.event(delta("B", "b1"), 1);
    up.event(
      {
        type: "permission_asked",
        request: {
          id: "p",
          session_id: "C",
          root_session_id: "A",
          agent: "general",
          tool: "bash",
          target: "ls",
          permission: "bash",
          patterns: [],
          always: [],
          created_at: 0,
        },
      } as unknown as Event,
      1,
    );
    expect(a.events).toEqual(["a1", "permission_asked"]);
    expect(b.events).toEqual(["b1"]);
    expect(all.events).toEqual(["a1", "b1", "permission_asked"]);
    // A listener that comes later is told the stream is open (it loads), on the same stream.
    const late = listen(m, "B");
    await Promise.resolve();
    expect(late.states).toEqual(["open"]);
    expect(up.subs).toHaveLength(1);
    a.stop();
    up.event(delta("A", "a2"), 2);
    expect(a.events).toHaveLength(2);
  });

  it("resumes a lost connection where it was: no reload, nothing twice", () => {
    const up = upstream();
    const m = new Multiplexer(up.base);
    const a = listen(m, "A");
    const all = listen(m, null);
    const seen: string[] = [];
    m.onStateChange((s) => seen.push(s));
    up.hello({ epoch: "E", reset: "all" });
    up.event(delta("A", "1"), 1);
    up.event(delta("A", "2"), 2);
    up.event(delta("B", "x"), 1);
    up.state("reconnecting");
    expect(a.states).toEqual(["open", "reconnecting"]);
    expect(m.getState()).toBe("reconnecting");
    // The transport reconnects asking from here.
    expect(up.cursor()).toEqual({ epoch: "E", seqs: { A: 2, B: 1 } });
    up.hello({ epoch: "E", reset: "none" });
    expect(a.states.at(-1)).toBe("resumed");
    expect(all.states.at(-1)).toBe("resumed");
    expect(m.getState()).toBe("resumed");
    // An Event delivered before (an overlapping replay) is dropped; the next one passes.
    up.event(delta("A", "2"), 2);
    up.event(delta("A", "3"), 3);
    expect(a.events).toEqual(["1", "2", "3"]);
    expect(seen).toEqual(["open", "reconnecting", "resumed"]);
    // A view that came while the stream was down is told to load when it is back, not "resumed".
    up.state("reconnecting");
    const late = listen(m, "C");
    up.hello({ epoch: "E", reset: "none" });
    expect(late.states).toEqual(["open"]);
    expect(a.states.at(-1)).toBe("resumed");
  });

  it("reloads only the sessions the runtime could not resume, and everything after a restart", () => {
    const up = upstream();
    const m = new Multiplexer(up.base);
    const a = listen(m, "A");
    const b = listen(m, "B");
    const all = listen(m, null);
    up.hello({ epoch: "E", reset: "all" });
    up.event(delta("A", "1"), 1);
    up.event(delta("B", "1"), 1);
    up.state("reconnecting");
    up.hello({ epoch: "E", reset: ["A"] });
    expect(a.states.at(-1)).toBe("lagged");
    expect(b.states.at(-1)).toBe("resumed");
    expect(all.states.at(-1)).toBe("lagged");
    // A's numbers start over from what the reload sees; B's go on.
    expect(up.cursor()).toEqual({ epoch: "E", seqs: { B: 1 } });
    // The server restarted: another epoch, numbers from 1 again, everyone loads.
    up.state("reconnecting");
    up.hello({ epoch: "F", reset: "all" });
    expect(a.states.at(-1)).toBe("open");
    expect(b.states.at(-1)).toBe("open");
    up.event(delta("B", "new 1"), 1);
    expect(b.events).toEqual(["1", "new 1"]);
    expect(up.cursor()).toEqual({ epoch: "F", seqs: { B: 1 } });
  });
});
