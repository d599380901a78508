import { memo } from "react";
import type { ContextUsage } from "../protocol/generated";
import { formatTokens } from "../lib/format";

/**
 * How full the model's context is: the runtime's estimate of the next
 * request (system prompt, tools, history) against the model's window, with
 * the point where automatic compaction starts.
 */
export const ContextMeter = memo(function ContextMeter({ usage }: { usage: ContextUsage }) {
  const share = usage.window > 0 ? Math.min(1, usage.tokens / usage.window) : 0;
  const pct = Math.round(share * 100);
  const level = usage.tokens >= usage.budget ? "full" : usage.tokens >= usage.budget * 0.8 ? "near" : "ok";
  const title =
    `About ${usage.tokens.toLocaleString()} tokens in the next request` +
    (usage.complete ? "" : " (history only: the system prompt and tools are counted from the next request)") +
    ` of ${usage.model}'s ${usage.window.toLocaleString()}-token window; automatic compaction starts at ${usage.budget.toLocaleString()}.`;
  return (
    <span className={`context-meter context-${level}`} data-testid="context-meter" data-level={level} title={title}>
      <span className="context-bar" aria-hidden>
        <span className="context-fill" style={{ width: `${pct}%` }} />
        <span className="context-mark" style={{ left: `${Math.round((usage.budget / Math.max(1, usage.window)) * 100)}%` }} />
      </span>
      <span className="small">
        {usage.complete ? "" : "≈"}
        {formatTokens(usage.tokens)} / {formatTokens(usage.window)} ({pct}%)
      </span>
      <span className="sr-only">{title}</span>
    </span>
  );
});
