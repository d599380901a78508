import { ClockAlert, OctagonX, TriangleAlert, Webhook } from "lucide-react";
import type { HookRun } from "../protocol/generated";
import type { HookNote } from "../state/session";
import { formatDuration } from "../lib/format";

/** What a hook decided, in words (`block` → "blocked"); an outcome this UI does not know, as it came. */
const OUTCOMES: Record<string, string> = {
  block: "blocked",
  deny: "denied",
  ask: "asked",
  allow: "allowed",
  timeout: "timed out",
  error: "failed",
  stop: "stopped",
};

/**
 * How loud a run is: `stopped` something (a block or a deny: the warning colour), `failed` (it
 * timed out or could not run: the danger colour), or `quiet` (muted).
 */
export function hookSeverity(run: HookRun): "quiet" | "stopped" | "failed" {
  switch (run.outcome) {
    case "block":
    case "deny":
      return "stopped";
    case "timeout":
    case "error":
      return "failed";
    default:
      return "quiet";
  }
}

/** The run's outcome and message: "blocked: reason", "reason" (no decision), "" (neither). */
export function hookVerdict(run: HookRun): string {
  const outcome = run.outcome ? (OUTCOMES[run.outcome] ?? run.outcome) : "";
  const message = run.message?.trim() ?? "";
  if (outcome && message) return `${outcome}: ${message}`;
  return outcome || message;
}

/** The whole line as text (its tooltip): "PreToolUse · ./check.sh · exit 2 · 12 ms · blocked: reason". */
export function hookLine(run: HookRun): string {
  const parts = [run.event, run.command];
  if (run.exit_code != null) parts.push(`exit ${run.exit_code}`);
  parts.push(formatDuration(run.duration_ms));
  const verdict = hookVerdict(run);
  if (verdict) parts.push(verdict);
  return parts.join(" · ");
}

function HookIcon({ run }: { run: HookRun }) {
  if (run.outcome === "timeout") return <ClockAlert size={12} aria-hidden />;
  if (run.outcome === "error") return <TriangleAlert size={12} aria-hidden />;
  if (hookSeverity(run) === "stopped") return <OctagonX size={12} aria-hidden />;
  return <Webhook size={12} aria-hidden />;
}

/** One hook run: a small line, muted unless it stopped something or failed. */
export function HookRunLine({ run }: { run: HookRun }) {
  const severity = hookSeverity(run);
  const verdict = hookVerdict(run);
  return (
    <li
      className={`hook-run hook-${severity}`}
      data-testid="hook-run"
      data-event={run.event}
      data-outcome={run.outcome ?? undefined}
      title={hookLine(run)}
    >
      <HookIcon run={run} />{" "}
      <span className="hook-event">{run.event}</span>
      {" · "}
      <code className="hook-command">{run.command}</code>
      {run.exit_code != null && <> · exit {run.exit_code}</>}
      {" · "}
      {formatDuration(run.duration_ms)}
      {verdict && (
        <>
          {" · "}
          <span className="hook-verdict">{verdict}</span>
        </>
      )}
    </li>
  );
}

/** The hooks that ran for a tool call, on its card. */
export function HookRuns({ runs }: { runs: readonly HookRun[] }) {
  if (runs.length === 0) return null;
  return (
    <ul className="hook-runs" data-testid="tool-card-hooks" aria-label="Hooks">
      {runs.map((run, i) => (
        <HookRunLine key={i} run={run} />
      ))}
    </ul>
  );
}

/** Hook runs of no tool call (`Stop`, `UserPromptSubmit`, ...), as lines in the transcript where they arrived. */
export function HookNotes({ notes }: { notes: readonly HookNote[] }) {
  if (notes.length === 0) return null;
  return (
    <ul className="hook-runs hook-notes" data-testid="hook-notes" aria-label="Hooks">
      {notes.map((n, i) => (
        <HookRunLine key={i} run={n.run} />
      ))}
    </ul>
  );
}
