import type { CompactResult, Message } from "../protocol/generated";
import { formatTokens } from "./format";

/** What a compaction summary message says about itself (its part and metadata). */
export interface CompactionInfo {
  /** Messages the summary stands for. */
  compacted: number;
  summary: string;
  /** "messages" | "tokens" | "manual" | "overflow" (as the runtime names it); null when unknown. */
  trigger: string | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  retained: number | null;
  compactedAt: number | null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The marker's facts, or null when the message is not a compaction summary. */
export function compactionInfo(m: Message): CompactionInfo | null {
  if (m.type !== "compaction_summary") return null;
  const part = m.parts.find((p) => p.content.type === "compaction_summary")?.content;
  const meta = m.metadata;
  const fromPart = part && part.type === "compaction_summary" ? part : null;
  const compacted = fromPart?.compacted_messages ?? num(meta.original_message_count) ?? 0;
  const text = fromPart?.summary ?? m.parts.map((p) => (p.content.type === "text" ? p.content.text : "")).join("");
  return {
    compacted,
    summary: text,
    trigger: typeof meta.trigger === "string" ? meta.trigger : null,
    tokensBefore: num(meta.tokens_before),
    tokensAfter: num(meta.tokens_after),
    retained: num(meta.retained),
    compactedAt: num(meta.compacted_at),
  };
}

/** Why it ran, in words: "automatically", "by you", "the model's context was full". */
export function triggerWords(trigger: string | null | undefined): string | null {
  switch (trigger) {
    case "messages":
    case "tokens":
      return "automatically";
    case "manual":
      return "by you";
    case "overflow":
      return "the model's context was full";
    default:
      return null;
  }
}

/** The longer reason, for a tooltip. */
export function triggerDetail(trigger: string | null | undefined): string | null {
  switch (trigger) {
    case "messages":
      return "Compacted automatically: the conversation passed compaction.threshold messages.";
    case "tokens":
      return "Compacted automatically: the next request would have filled compaction.tokenRatio of the model's context window.";
    case "manual":
      return "Compacted by you (/compact).";
    case "overflow":
      return "Compacted because the provider said the conversation no longer fit the model's context window.";
    default:
      return null;
  }
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** "~12k → ~3.1k tokens", or null when the message does not say. */
export function tokenChange(before: number | null, after: number | null): string | null {
  if (before === null || after === null) return null;
  return `~${formatTokens(before)} → ~${formatTokens(after)} tokens`;
}

/** The marker's headline: "Compacted 4 messages · ~12k → ~3.1k tokens · by you". */
export function markerText(info: CompactionInfo): string {
  const parts = [`Compacted ${plural(info.compacted, "message")}`];
  const tokens = tokenChange(info.tokensBefore, info.tokensAfter);
  if (tokens) parts.push(tokens);
  const why = triggerWords(info.trigger);
  if (why) parts.push(why);
  return parts.join(" · ");
}

/** What /compact says when it worked. */
export function compactResultText(r: CompactResult): string {
  return `Compacted ${plural(r.compacted, "message")} into a summary. ${plural(r.retained, "recent message")} retained.`;
}

/** The line under "Compacting the conversation…": why it runs and how big the conversation was. */
export function compactingDetail(trigger?: string, tokensBefore?: number): string {
  let what: string;
  switch (trigger) {
    case "manual":
      what = "Summarising the older messages, as you asked";
      break;
    case "messages":
    case "tokens":
      what = "Summarising the older messages automatically";
      break;
    case "overflow":
      what = "The model's context was full: summarising the older messages, then the request is sent again";
      break;
    default:
      what = "Summarising the older messages";
  }
  const size = tokensBefore ? ` (the conversation is ~${formatTokens(tokensBefore)} tokens)` : "";
  return `${what}${size}. The originals stay readable from the marker.`;
}
