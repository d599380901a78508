import { describe, expect, it, vi } from "vitest";
import type { PermissionRequest, Session } from "../protocol/generated";
import { bashRequest } from "../components/permission/fixtures";
import { AttentionStore } from "./attention";

const ask = (id: string, session: string, root?: string): PermissionRequest => ({
  ...bashRequest,
  id,
  session_id: session,
  root_session_id: root ?? null,
});

describe("AttentionStore", () => {
  it("collects asks across sessions, drops answered ones and those of a finished turn", () => {
    const st = new AttentionStore();
    const seen = vi.fn();
    st.subscribe(seen);
    expect(st.apply({ type: "permission_asked", request: ask("perm-2", "B") })).toMatchObject({ id: "perm-2" });
    st.apply({ type: "permission_asked", request: ask("perm-1", "A") });
    // The same ask twice (a reconnect replays it) is kept once.
    expect(st.apply({ type: "permission_asked", request: ask("perm-1", "A") })).toBeNull();
    expect(st.getState().asks.map((a) => a.id)).toEqual(["perm-2", "perm-1"]);
    st.apply({ type: "permission_resolved", session_id: "B", request_id: "perm-2", decision: "allow", by: "user", reason: "" });
    expect(st.getState().asks.map((a) => a.id)).toEqual(["perm-1"]);
    st.apply({
      type: "turn_finished",
      session_id: "A",
      end: "cancelled",
      steps: 1,
      usage: { input: 0, output: 0 },
      cost_usd: null,
    } as never);
    expect(st.getState().asks).toEqual([]);
    expect(seen).toHaveBeenCalledTimes(4);
  });

  it("tracks running sessions from session updates, steps and finished turns", () => {
    const st = new AttentionStore();
    const session = (id: string, status: string) => ({ id, status }) as unknown as Session;
    st.apply({ type: "session_updated", session: session("A", "busy") });
    st.apply({ type: "step_started", session_id: "B", message_id: "m", agent: "build", model: "x" } as never);
    expect(st.getState().running.get("A")).toBe(true);
    expect(st.getState().running.get("B")).toBe(true);
    st.apply({ type: "session_updated", session: session("A", "idle") });
    st.apply({ type: "turn_finished", session_id: "B", end: "completed", steps: 1, usage: { input: 0, output: 0 } } as never);
    // Known and not running (a stale list saying "busy" no longer wins).
    expect(st.getState().running.get("A")).toBe(false);
    expect(st.getState().running.get("B")).toBe(false);
    expect(st.getState().running.get("C")).toBeUndefined();
  });

  it("a seed replaces what the events said, oldest first", () => {
    const st = new AttentionStore();
    st.apply({ type: "permission_asked", request: ask("perm-9", "A") });
    st.seed([ask("perm-5", "B"), ask("perm-3", "C")]);
    expect(st.getState().asks.map((a) => a.id)).toEqual(["perm-3", "perm-5"]);
  });

  it("tells a session's own asks (its subagents' too) from those waiting elsewhere", () => {
    const asks = [ask("perm-1", "A"), ask("perm-2", "child", "A"), ask("perm-3", "B")];
    expect(AttentionStore.of(asks, "A").map((a) => a.id)).toEqual(["perm-1", "perm-2"]);
    expect(AttentionStore.elsewhere(asks, "A").map((a) => a.id)).toEqual(["perm-3"]);
    expect(AttentionStore.elsewhere(asks, null)).toHaveLength(3);
  });

  it("marks a session whose turn ended unseen as finished or failed until it is opened", () => {
    const st = new AttentionStore();
    const end = (session: string, e: "completed" | "error" | "step_limit") =>
      st.apply({ type: "turn_finished", session_id: session, end: e, steps: 1, usage: { input: 0, output: 0 } } as never);
    st.setOpen("A");
    end("A", "completed");
    end("B", "completed");
    end("C", "error");
    end("D", "step_limit");
    // A was on screen: read at once.
    expect([...st.getState().finished]).toEqual([
      ["B", "done"],
      ["C", "failed"],
      ["D", "failed"],
    ]);
    // Opening B reads it; a new turn in C clears its failure.
    st.setOpen("B");
    st.apply({ type: "step_started", session_id: "C", message_id: "m", step: 1 } as never);
    expect([...st.getState().finished]).toEqual([["D", "failed"]]);
    expect(st.getState().running.get("C")).toBe(true);
  });
});
