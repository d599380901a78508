import { StatusIcon } from "./StatusIcon";
import { memo, useEffect, useRef } from "react";
import type { ResultContent } from "../protocol/generated";
import type { ToolInfo } from "../state/session";
import { useOpenFile } from "./openFile";
import { usePlatform } from "./context";
import { useExpanded } from "../state/expanded";
import { AskAtCard } from "./inlineAsks";
import { CheckpointActions, useCheckpoints } from "./checkpoints/Checkpoints";
import { HookRuns } from "./HookRuns";
import { describeDecision, describeSandbox, formatDuration, mcpToolName, toolTarget } from "../lib/format";
import { ChevronDown, ChevronRight, Link2, Lock, TriangleAlert } from "lucide-react";

const MAX_LINES = 200;
const PREVIEW_LINES = 6;

function ResultText({ callId, output, expanded }: { callId: string; output: string; expanded: boolean }) {
  // "Show all" stays pressed, like the card's expansion, through virtualisation and switches.
  const [all, toggleAll] = useExpanded(`${callId}#all`);
  const lines = output.split("\n");
  const limit = expanded ? MAX_LINES : PREVIEW_LINES;
  const cut = !all && lines.length > limit;
  return (
    <>
      <pre className="tool-output">{cut ? lines.slice(0, limit).join("\n") : output}</pre>
      {cut && expanded && (
        <button type="button" className="link-btn" data-testid="tool-show-all" onClick={toggleAll}>
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
      {d.unconfined ? <TriangleAlert size={12} aria-hidden /> : <Lock size={12} aria-hidden />} {d.label}
      <span className="sr-only"> — {d.title}</span>
      {note.hosts && note.hosts.length > 0 && (
        <ul className="tool-sandbox-hosts" data-testid="tool-card-hosts">
          {note.hosts.map((h) => (
            <li key={`${h.host}:${h.port}:${String(h.allowed)}`} data-allowed={String(h.allowed)}>
              {h.allowed ? "→" : "✗"} {h.host}:{h.port}
              {h.program ? ` (${h.program})` : ""}
              {h.allowed ? "" : ` — ${h.reason}`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Image types shown inline (never SVG: it can carry scripts and links). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The data: URL of an image a tool returned, or null when it is not one shown inline. */
export function imageSrc(mediaType: string, data: string): string | null {
  const type = mediaType.split(";")[0]!.trim().toLowerCase();
  if (!type.startsWith("image/") || !IMAGE_TYPES.has(type)) return null;
  const clean = data.replace(/\s+/g, "");
  if (!clean || !BASE64.test(clean)) return null;
  return `data:${type};base64,${clean}`;
}

const WEB_URL = /^https?:\/\//i;

/** A resource link: opened in the system browser when it is a web address, plain text otherwise. */
function ResourceLink({ item }: { item: Extract<ResultContent, { type: "resource_link" }> }) {
  const platform = usePlatform();
  const label = item.name || item.uri;
  return (
    <div className="tool-resource-link" data-testid="tool-content-link">
      <Link2 size={12} aria-hidden />{" "}
      {WEB_URL.test(item.uri) ? (
        <a
          href={item.uri}
          title={item.uri}
          target="_blank"
          rel="noopener noreferrer"
          onClick={(e) => {
            // Never navigate the webview: hand the URL to the system browser.
            e.preventDefault();
            platform?.openExternal(item.uri);
          }}
        >
          {label}
        </a>
      ) : (
        <>
          <span>{label}</span>
          {label !== item.uri && <span className="mono muted small"> {item.uri}</span>}
        </>
      )}
      {item.mime_type && <span className="muted small"> ({item.mime_type})</span>}
      {item.description && <span className="muted small"> — {item.description}</span>}
    </div>
  );
}

/** What a tool returned besides text: images, resource links, embedded resources. */
function ResultItems({ items, tool }: { items: ResultContent[]; tool: string }) {
  return (
    <div className="tool-content" data-testid="tool-card-content">
      {items.map((item, i) => {
        if (item.type === "image") {
          const src = imageSrc(item.media_type, item.data);
          return src ? (
            <img key={i} className="tool-image" src={src} alt={`From ${tool} (${item.media_type})`} />
          ) : (
            <div key={i} className="muted small" data-testid="tool-content-image-off">
              [image: {item.media_type}, not shown]
            </div>
          );
        }
        if (item.type === "resource_link") return <ResourceLink key={i} item={item} />;
        if (item.text != null)
          return (
            <details key={i} className="tool-resource" data-testid="tool-content-resource">
              <summary className="mono small">
                {item.uri}
                {item.mime_type && <span className="muted"> ({item.mime_type})</span>}
              </summary>
              <pre className="tool-output">{item.text}</pre>
            </details>
          );
        return (
          <div key={i} className="tool-resource muted small" data-testid="tool-content-resource">
            <span className="mono">{item.uri}</span> ({item.mime_type ?? "binary"}, not shown)
          </div>
        );
      })}
    </div>
  );
}

/** One tool call: header (tool, target, status), arguments, result, decision, sandbox, hooks, changed files. */
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
  const mcp = mcpToolName(info.tool);
  // Undone now (an undo or a restore): marked in place.
  const undone = useCheckpoints()?.undone.has(info.callId) ?? false;
  return (
    <div className={`tool-card tool-${status}`} data-testid="tool-card" data-tool={info.tool} data-call-id={info.callId}>
      <button type="button" className="tool-head" aria-expanded={expanded} onClick={toggleExpanded}>
        <span className="chev" aria-hidden>
          {expanded ? <ChevronDown size={14} /> : <ChevronRight size={14} />}
        </span>
        {mcp ? (
          <span className="tool-name" title={info.tool}>
            {mcp.tool}
            <span className="tool-mcp"> · MCP {mcp.server}</span>
          </span>
        ) : (
          <span className="tool-name">{info.tool}</span>
        )}
        {target && <span className="tool-target mono">{target}</span>}
        {undone && (
          <span className="tool-undone-badge" data-testid="tool-card-undone">
            Undone
          </span>
        )}
        <span className="tool-status" aria-label={status}>
          <StatusIcon status={status} />
        </span>
        {info.durationMs !== undefined && <span className="muted small">{formatDuration(info.durationMs)}</span>}
      </button>
      {expanded && info.input !== null && info.input !== undefined && (
        <pre className="tool-args mono" aria-label="Arguments">
          {argsText(info.input)}
        </pre>
      )}
      {!done && <AskAtCard callId={info.callId} />}
      {info.decision && (
        <div className={`tool-decision decision-${info.decision.decision}`} data-testid="tool-card-decision">
          {describeDecision(info.decision)}
        </div>
      )}
      {info.sandbox && <SandboxBadge note={info.sandbox} />}
      {info.hooks && <HookRuns runs={info.hooks} />}
      {!done && running && info.live !== undefined && <LiveText text={info.live} expanded={expanded} />}
      {done && (
        <div className="tool-result" data-testid="tool-card-result">
          <ResultText callId={info.callId} output={info.output ?? ""} expanded={expanded} />
        </div>
      )}
      {info.content && info.content.length > 0 && <ResultItems items={info.content} tool={mcp?.tool ?? info.tool} />}
      {info.snapshotUnavailable && <div className="muted small">Undo unavailable: {info.snapshotUnavailable}</div>}
      {files.length > 0 && (
        <div className="tool-files">
          <ul>
            {files.map((f) => (
              <li key={f.path} className={undone ? "undone" : undefined}>
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
          <CheckpointActions restoreTo={undone ? null : info.messageId} forkAt={info.messageId} />
        </div>
      )}
    </div>
  );
});
