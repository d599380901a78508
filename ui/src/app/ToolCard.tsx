import { memo, useEffect, useRef, useState } from "react";
import type { ToolInfo } from "../state/session";
import { useOpenFile } from "./openFile";
import { useExpanded } from "../state/expanded";
import { describeDecision, describeSandbox, formatDuration, toolTarget } from "../lib/format";

const MAX_LINES = 200;
const PREVIEW_LINES = 6;

function ResultText({ output, expanded }: { output: string; expanded: boolean }) {
  const [all, setAll] = useState(false);
  const lines = output.split("\n");
  const limit = expanded ? MAX_LINES : PREVIEW_LINES;
  const cut = !all && lines.length > limit;
  return (
    <>
      <pre className="tool-output">{cut ? lines.slice(0, limit).join("\n") : output}</pre>
      {cut && expanded && (
        <button type="button" className="link-btn" onClick={() => setAll(true)}>
          Show all {lines.length} lines
        </button>
      )}
      {cut && !expanded && <span className="muted small">… {lines.length - limit} more lines</span>}
    </>
  );
}

const LIVE_PREVIEW_LINES = 12;

/** A running command's output as it comes: its tail, following new lines unless scrolled up. */
function LiveText({ text, expanded }: { text: string; expanded: boolean }) {
  const ref = useRef<HTMLPreElement>(null);
  const lines = text.replace(/\n$/, "").split("\n");
  const shown = expanded ? lines.slice(-MAX_LINES) : lines.slice(-LIVE_PREVIEW_LINES);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Follow the output while the reader is at the bottom.
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 40) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <div className="tool-result tool-live" data-testid="tool-card-live" aria-live="off">
      {lines.length > shown.length && <span className="muted small">… {lines.length - shown.length} earlier lines</span>}
      <pre ref={ref} className="tool-output">
        {shown.join("\n")}
      </pre>
    </div>
  );
}

function argsText(input: unknown): string {
  if (input === null || input === undefined) return "";
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    // A cycle or a BigInt: never in arguments that came as JSON (String() would say "[object Object]").
    return "(arguments that cannot be shown as JSON)";
  }
}

function SandboxBadge({ note }: { note: NonNullable<ToolInfo["sandbox"]> }) {
  const d = describeSandbox(note);
  return (
    <div
      className={`tool-sandbox${d.unconfined ? " unconfined" : ""}${note.blocked ? " blocked" : ""}`}
      data-testid="tool-card-sandbox"
      title={d.title}
    >
      <span aria-hidden>{d.unconfined ? "⚠" : "🔒"}</span> {d.label}
      <span className="sr-only"> — {d.title}</span>
    </div>
  );
}

/** One tool call: header (tool, target, status), arguments, result, decision, changed files, sandbox. */
export const ToolCard = memo(function ToolCard({
  info,
  running,
  onDiff,
}: {
  info: ToolInfo;
  running: boolean;
  onDiff: (callId: string) => void;
}) {
  // Survives virtualisation, new messages and session switches (state/expanded.ts).
  const [expanded, toggleExpanded] = useExpanded(info.callId);
  const openFile = useOpenFile();
  const done = info.output !== undefined;
  const status = !done ? (running ? "running" : "stopped") : info.isError ? "error" : "ok";
  const target = toolTarget(info.input);
  const files = info.files ?? [];
  return (
    <div className={`tool-card tool-${status}`} data-testid="tool-card" data-tool={info.tool} data-call-id={info.callId}>
      <button type="button" className="tool-head" aria-expanded={expanded} onClick={toggleExpanded}>
        <span className="chev" aria-hidden>
          {expanded ? "▾" : "▸"}
        </span>
        <span className="tool-name">{info.tool}</span>
        {target && <span className="tool-target mono">{target}</span>}
        <span className="tool-status" aria-label={status}>
          {status === "running" ? "…" : status === "ok" ? "✓" : status === "error" ? "✗" : "■"}
        </span>
        {info.durationMs !== undefined && <span className="muted small">{formatDuration(info.durationMs)}</span>}
      </button>
      {expanded && info.input !== null && info.input !== undefined && (
        <pre className="tool-args mono" aria-label="Arguments">
          {argsText(info.input)}
        </pre>
      )}
      {info.decision && (
        <div className={`tool-decision decision-${info.decision.decision}`} data-testid="tool-card-decision">
          {describeDecision(info.decision)}
        </div>
      )}
      {info.sandbox && <SandboxBadge note={info.sandbox} />}
      {!done && running && info.live !== undefined && <LiveText text={info.live} expanded={expanded} />}
      {done && (
        <div className="tool-result" data-testid="tool-card-result">
          <ResultText output={info.output ?? ""} expanded={expanded} />
        </div>
      )}
      {info.snapshotUnavailable && <div className="muted small">Undo unavailable: {info.snapshotUnavailable}</div>}
      {files.length > 0 && (
        <div className="tool-files">
          <ul>
            {files.map((f) => (
              <li key={f.path}>
                <span className={`kind kind-${f.kind}`}>{f.kind[0]?.toUpperCase()}</span>
                <span className="mono">{f.path}</span>
                <span className="add">+{f.additions ?? 0}</span>
                <span className="del">−{f.deletions ?? 0}</span>
                {openFile && f.kind !== "deleted" && (
                  <button
                    type="button"
                    className="link-btn small"
                    data-testid="tool-card-open-file"
                    title={`Open ${f.path} in the editor`}
                    onClick={() => openFile(f.path)}
                  >
                    Open
                  </button>
                )}
              </li>
            ))}
          </ul>
          <button type="button" className="btn small" data-testid="tool-card-diff" onClick={() => onDiff(info.callId)}>
            Diff
          </button>
        </div>
      )}
    </div>
  );
});
