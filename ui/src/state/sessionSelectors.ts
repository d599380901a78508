import type { Message } from "../protocol/generated";
import { mergeParts } from "./sessionParts";
import type { SessionState, ToolInfo } from "./sessionTypes";

// What views read from a session's state and messages.

/** A compaction is running: this window saw it start, or the session's status says so. */
export function isCompacting(s: SessionState): boolean {
  return s.compaction?.state === "running" || s.session?.status === "compacting";
}

/** The tool map of messages shown outside the session's list (a compaction's archive). */
export function toolsOf(messages: Message[]): Record<string, ToolInfo> {
  let tools: Record<string, ToolInfo> = {};
  for (const m of messages) tools = mergeParts(tools, m, false);
  return tools;
}

/** Sum of tokens and cost over the session's assistant messages. */
export function sessionTotals(messages: Message[]): { input: number; output: number; cost: number; priced: boolean } {
  let input = 0;
  let output = 0;
  let cost = 0;
  let priced = false;
  for (const m of messages) {
    const t = m.metadata.tokens;
    if (t) {
      input += t.input;
      output += t.output;
    }
    if (typeof m.metadata.cost_usd === "number") {
      cost += m.metadata.cost_usd;
      priced = true;
    }
  }
  return { input, output, cost, priced };
}

/** The text of the latest user message (what Retry and history use). */
export function userTexts(messages: Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user" || m.type !== "normal") continue;
    const text = m.parts.map((p) => (p.content.type === "text" && !p.content.synthetic ? p.content.text : "")).join("");
    if (text) out.push(text);
  }
  return out;
}
