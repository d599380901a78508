import type { Message } from "../protocol/generated";
import type { ToolInfo } from "../state/session";

/**
 * The messages of a transcript that contain `query` (case-insensitive), in
 * order: their text, reasoning, summaries, tool calls (name and arguments)
 * and tool results. Empty for an empty query.
 */
export function transcriptMatches(messages: Message[], tools: Record<string, ToolInfo>, query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  return messages.filter((m) => haystack(m, tools).includes(q)).map((m) => m.id);
}

function haystack(m: Message, tools: Record<string, ToolInfo>): string {
  const out: string[] = [];
  for (const p of m.parts) {
    const c = p.content;
    switch (c.type) {
      case "text":
      case "reasoning":
        out.push(c.text);
        break;
      case "tool_call": {
        out.push(c.tool, safeJson(c.input));
        const t = tools[c.call_id];
        if (t?.output) out.push(t.output);
        else if (t?.live) out.push(t.live);
        break;
      }
      case "tool_result":
        out.push(c.output);
        break;
      case "compaction_summary":
        out.push(c.summary);
        break;
      default:
        break;
    }
  }
  return out.join("\n").toLowerCase();
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}
