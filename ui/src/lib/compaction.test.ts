import { describe, expect, it } from "vitest";
import type { Message } from "../protocol/generated";
import { compactingDetail, compactionInfo, compactResultText, markerText, triggerWords } from "./compaction";

const summary = (metadata: Message["metadata"], compacted = 6): Message => ({
  id: "c1",
  session_id: "s",
  role: "system",
  type: "compaction_summary",
  created_at: 1,
  metadata,
  parts: [
    { id: "p", message_id: "c1", index: 0, created_at: 1, content: { type: "compaction_summary", summary: "S", compacted_messages: compacted } },
  ],
});

describe("compaction texts", () => {
  it("reads the marker's facts from the part and the metadata", () => {
    const info = compactionInfo(summary({ trigger: "overflow", tokens_before: 150_000, tokens_after: 8_000, retained: 3 }));
    expect(info).toMatchObject({ compacted: 6, summary: "S", trigger: "overflow", tokensBefore: 150_000, tokensAfter: 8_000, retained: 3 });
    expect(markerText(info!)).toBe("Compacted 6 messages · ~150k → ~8.0k tokens · the model's context was full");
  });

  it("leaves out what the message does not say", () => {
    const info = compactionInfo(summary({ tokens_before: "lots" }, 1))!;
    expect(info.tokensBefore).toBeNull();
    expect(markerText(info)).toBe("Compacted 1 message");
  });

  it("is null for other messages", () => {
    expect(compactionInfo({ ...summary({}), type: "normal" })).toBeNull();
  });

  it("names triggers and results in words", () => {
    expect(triggerWords("messages")).toBe("automatically");
    expect(triggerWords("tokens")).toBe("automatically");
    expect(triggerWords("manual")).toBe("by you");
    expect(triggerWords("overflow")).toBe("the model's context was full");
    expect(triggerWords("new-kind")).toBeNull();
    expect(compactResultText({ compacted: 1, retained: 1, tokens_before: 1, tokens_after: 1, message_id: "m" })).toBe(
      "Compacted 1 message into a summary. 1 recent message retained.",
    );
    expect(compactingDetail("manual", 12_400)).toBe(
      "Summarising the older messages, as you asked (the conversation is ~12k tokens). The originals stay readable from the marker.",
    );
  });
});
