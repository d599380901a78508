import { describe, expect, it } from "vitest";
import type { Message } from "../protocol/generated";
import { transcriptMatches } from "./transcriptSearch";

const msg = (id: string, parts: Message["parts"][number]["content"][]): Message =>
  ({
    id,
    session_id: "s",
    role: "assistant",
    type: "normal",
    created_at: 0,
    parts: parts.map((content, i) => ({ id: `${id}-${i}`, message_id: id, content })),
    metadata: {},
  }) as unknown as Message;

describe("transcript search", () => {
  const messages = [
    msg("m1", [{ type: "text", text: "Let me look at the Parser." }]),
    msg("m2", [{ type: "tool_call", call_id: "c1", tool: "bash", input: { command: "cargo test" } }]),
    msg("m3", [{ type: "tool_result", call_id: "c1", tool: "bash", output: "test parser_handles_unicode ... FAILED" }]),
    msg("m4", [{ type: "compaction_summary", summary: "Earlier: renamed the lexer", compacted_messages: 3 }]),
  ];

  it("finds text, tool arguments, tool output and summaries, case-insensitively, in order", () => {
    expect(transcriptMatches(messages, {}, "parser")).toEqual(["m1", "m3"]);
    expect(transcriptMatches(messages, {}, "CARGO TEST")).toEqual(["m2"]);
    expect(transcriptMatches(messages, {}, "lexer")).toEqual(["m4"]);
    expect(transcriptMatches(messages, {}, "nothing like this")).toEqual([]);
    expect(transcriptMatches(messages, {}, "   ")).toEqual([]);
  });

  it("finds a running command's output on its call", () => {
    const tools = { c1: { callId: "c1", tool: "bash", input: null, messageId: "m2", live: "Compiling mia-core" } };
    expect(transcriptMatches(messages, tools, "compiling mia")).toEqual(["m2"]);
  });
});
