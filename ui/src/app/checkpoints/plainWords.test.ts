import { describe, expect, it } from "vitest";
import type { Message, TimelineStep } from "../../protocol/generated";
import { forkSize, previewWords, restoredText, restoreTarget } from "./plainWords";

const msg = (id: string, role: Message["role"], type: Message["type"] = "normal"): Message =>
  ({ id, role, type, parts: [], metadata: {} }) as unknown as Message;

const step = (id: string, index: number, message_id: string, undone = false): TimelineStep => ({
  id,
  index,
  message_id,
  undone,
  kind: "tool",
  tool: "edit",
  tool_call_id: `call-${id}`,
  before: "b",
  after: "a",
  created_at: 0,
  changes: [{ path: "src/a.ts", kind: "modified", additions: 1, deletions: 1 }],
});

describe("checkpoints in plain words", () => {
  const messages = [msg("u1", "user"), msg("a1", "assistant"), msg("u2", "user"), msg("a2", "assistant")];

  it("restores a user message to before the first change of an answer after it", () => {
    const steps = [step("s1", 1, "a1"), step("s2", 2, "a2")];
    expect(restoreTarget(messages, "u1", steps)).toBe("a1");
    expect(restoreTarget(messages, "u2", steps)).toBe("a2");
    // Undone steps do not count; nothing changed since: nothing to restore.
    expect(restoreTarget(messages, "u1", [step("s1", 1, "a1", true), step("s2", 2, "a2")])).toBe("a2");
    expect(restoreTarget(messages, "u2", [step("s1", 1, "a1")])).toBeNull();
  });

  it("says what a restore did without hashes or ids", () => {
    expect(restoredText({ restored: ["src/a.ts"], removed: ["src/new.ts"] })).toBe(
      "Reverted: restored src/a.ts; removed src/new.ts",
    );
    expect(restoredText({ restored: ["a", "b", "c", "d", "e"], removed: [] })).toBe("Reverted: restored a, b, c and 2 more");
    expect(restoredText({ restored: [], removed: [] })).toBe("Reverted: no file needed to change");
  });

  it("says what each previewed file becomes", () => {
    expect(previewWords({ path: "a", action: "restore", was: "modified" })).toBe("back to how it was");
    expect(previewWords({ path: "a", action: "remove", was: "added" })).toMatch(/^removed/);
    expect(previewWords({ path: "a", action: "restore", was: "deleted" })).toMatch(/^brought back/);
  });

  it("counts what a fork starts with", () => {
    expect(forkSize(messages, "u2")).toBe(3);
    expect(forkSize(messages, "nope")).toBe(0);
  });
});
