import { describe, expect, it } from "vitest";
import { QueryObserver } from "@tanstack/react-query";
import type { Event } from "../protocol/generated";
import { fakeTransport } from "../app/testing";
import { createQueryClient, invalidateOnEvents, keys, staleFor } from "./queries";

const turnFinished = (id: string): Event => ({ type: "turn_finished", session_id: id, end: "completed" }) as Event;

describe("server state made stale by Events", () => {
  it("says which cached lists an Event outdates", () => {
    expect(staleFor(turnFinished("s1"))).toEqual([
      ["sessions"],
      keys.timeline("s1"),
      keys.cost("s1"),
      keys.diffsOf("s1"),
      ["worktrees"],
      ["git"],
      keys.review("s1"),
      ["commands"],
      ["trust"],
    ]);
    // A session's notice (its project's hooks do not run) reads trust again; a window-wide one does not.
    expect(staleFor({ type: "notice", session_id: "s1", message: "the project's hooks do not run" })).toEqual([["trust"]]);
    expect(staleFor({ type: "notice", message: "Installing plugin x" })).toEqual([]);
    expect(staleFor({ type: "text_delta", session_id: "s1", message_id: "m", text: "x" })).toEqual([]);
    // An answer may have added an "always for this project" approval (Settings lists them).
    expect(
      staleFor({ type: "permission_resolved", session_id: "s1", request_id: "p", decision: "allow", by: "user", reason: "" }),
    ).toEqual([["approvals"]]);
  });

  it("refetches what an Event outdates, and an older answer never overwrites a newer one", async () => {
    const client = createQueryClient();
    const fake = fakeTransport(() => undefined);
    const stop = invalidateOnEvents(client, fake.transport);
    // The list loads; a refetch starts and is slow (it will answer what was true when it started);
    // an Event then says the list changed: its fetch replaces the slow one, whose answer is dropped.
    const answers: { value: string[]; ms: number }[] = [
      { value: ["a"], ms: 1 },
      { value: ["a", "stale"], ms: 80 },
      { value: ["a", "new"], ms: 5 },
    ];
    let calls = 0;
    const observer = new QueryObserver(client, {
      queryKey: keys.sessions("/p", false),
      queryFn: () => {
        const a = answers[calls++]!;
        return new Promise<string[]>((r) => setTimeout(() => r(a.value), a.ms));
      },
    });
    const seen: string[][] = [];
    const unsub = observer.subscribe((r) => {
      if (r.data && seen.at(-1) !== r.data) seen.push(r.data);
    });
    await new Promise((r) => setTimeout(r, 20));
    void observer.refetch();
    await new Promise((r) => setTimeout(r, 5));
    fake.emit(turnFinished("s1"));
    await new Promise((r) => setTimeout(r, 150));
    expect(calls).toBe(3);
    expect(client.getQueryData(keys.sessions("/p", false))).toEqual(["a", "new"]);
    expect(seen).toEqual([["a"], ["a", "new"]]);
    unsub();
    stop();
  });

  it("refetches once for a burst of Events, after it", async () => {
    const client = createQueryClient();
    const fake = fakeTransport(() => undefined);
    const stop = invalidateOnEvents(client, fake.transport, 40);
    let calls = 0;
    const observer = new QueryObserver(client, { queryKey: keys.sessions("/p", false), queryFn: () => Promise.resolve([++calls]) });
    const unsub = observer.subscribe(() => undefined);
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(1);
    // The start of a turn: the session's status, its title, the user's message, in a few ms.
    const updated = { type: "session_updated", session: { id: "s1" } } as unknown as Event;
    for (let i = 0; i < 5; i++) fake.emit(updated);
    fake.emit(turnFinished("s1"));
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toBe(2);
    // A later Event is a new burst.
    fake.emit(updated);
    await new Promise((r) => setTimeout(r, 80));
    expect(calls).toBe(3);
    unsub();
    stop();
  });

  it("refetches everything when the stream could not be resumed, not on the first open", async () => {
    const client = createQueryClient();
    const fake = fakeTransport(() => undefined);
    invalidateOnEvents(client, fake.transport);
    let calls = 0;
    const observer = new QueryObserver(client, { queryKey: keys.agents("/p"), queryFn: () => Promise.resolve([++calls]) });
    const unsub = observer.subscribe(() => undefined);
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(1);
    fake.streamState("open"); // the start (the fake already said "open" once)
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(2);
    fake.streamState("lagged");
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toBe(3);
    unsub();
  });
});
