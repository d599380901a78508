import { useCallback, useRef, useState } from "react";
import type { DiffView as DiffViewData } from "../../protocol/generated";
import { FileSection } from "./FileSection";
import type { DiffMode } from "./FileSection";
import { initiallyExpanded } from "./model";
import "./DiffView.css";

export type { DiffViewData, DiffMode };

export interface DiffViewProps {
  diff: DiffViewData;
  /** Side-by-side (default) or unified. */
  defaultMode?: DiffMode;
  /** Copy the patch; default: the system clipboard. */
  onCopyPatch?: (patch: string) => void | Promise<void>;
  /** "Open in editor" for a file of the diff (absent: no button). */
  onOpenFile?: (path: string, line?: number) => void;
}

type CopyState = { state: "idle" } | { state: "copied" } | { state: "failed"; message: string };

const STATUS_BADGE = { added: "A", modified: "M", deleted: "D" } as const;

function copyToClipboard(patch: string): Promise<void> {
  if (!navigator.clipboard) return Promise.reject(new Error("the clipboard is not available here"));
  return navigator.clipboard.writeText(patch);
}

/** A diff (spec 077): summary, file list, per-file hunks side by side or unified, copy as patch. */
export function DiffView({ diff, defaultMode = "split", onCopyPatch, onOpenFile }: DiffViewProps) {
  const [mode, setMode] = useState<DiffMode>(defaultMode);
  const [expanded, setExpanded] = useState<Record<string, boolean>>(() => expandedMap(diff));
  const [copy, setCopy] = useState<CopyState>({ state: "idle" });
  const filesRef = useRef<HTMLDivElement>(null);

  // New files (other scope, new turn) start with their own folding; a parent that rebuilds the
  // DiffView object around the same files keeps the person's choices. Adjusted during render.
  const [foldedFor, setFoldedFor] = useState(diff.files);
  if (foldedFor !== diff.files) {
    setFoldedFor(diff.files);
    setExpanded(expandedMap(diff));
  }

  const toggle = useCallback(
    (path: string) =>
      setExpanded((e) => {
        remember(diff, path, !e[path]);
        return { ...e, [path]: !e[path] };
      }),
    [diff],
  );

  const jumpTo = (index: number) => {
    const section = filesRef.current?.querySelectorAll<HTMLElement>('[data-testid="diff-file"]')[index];
    if (!section) return;
    section.scrollIntoView?.({ block: "start" });
    section.querySelector<HTMLElement>(".mia-diff-file-title")?.focus({ preventScroll: true });
  };

  const copyPatch = () => {
    let done: void | Promise<void>;
    try {
      done = (onCopyPatch ?? copyToClipboard)(diff.patch);
    } catch (err) {
      setCopy({ state: "failed", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    Promise.resolve(done).then(
      () => setCopy({ state: "copied" }),
      (err: unknown) => setCopy({ state: "failed", message: err instanceof Error ? err.message : String(err) }),
    );
  };

  return (
    <div className="mia-diff" data-testid="diff-view">
      <div className="mia-diff-toolbar">
        <p className="mia-diff-summary" data-testid="diff-summary">
          {diff.summary}
        </p>
        <div className="mia-diff-modes" role="group" aria-label="Diff layout">
          <button
            type="button"
            className="mia-diff-btn"
            data-testid="diff-mode-split"
            aria-pressed={mode === "split"}
            onClick={() => setMode("split")}
          >
            Side by side
          </button>
          <button
            type="button"
            className="mia-diff-btn"
            data-testid="diff-mode-unified"
            aria-pressed={mode === "unified"}
            onClick={() => setMode("unified")}
          >
            Unified
          </button>
        </div>
        <button
          type="button"
          className="mia-diff-btn"
          data-testid="diff-copy-patch"
          disabled={diff.patch === ""}
          onClick={copyPatch}
        >
          Copy as patch
        </button>
        <span className="mia-diff-copy-status" role="status">
          {copy.state === "copied" ? "Copied" : copy.state === "failed" ? `Copy failed: ${copy.message}` : ""}
        </span>
      </div>

      {diff.files.length === 0 ? (
        <p className="mia-diff-note">No changes</p>
      ) : (
        <>
          <ul className="mia-diff-file-list" data-testid="diff-file-list" aria-label="Changed files">
            {diff.files.map((f, i) => (
              <li key={f.file}>
                <button type="button" className="mia-diff-file-link" onClick={() => jumpTo(i)}>
                  <span className={`mia-diff-badge mia-diff-badge-${f.status}`} title={f.status}>
                    {STATUS_BADGE[f.status]}
                  </span>
                  <span className="mia-diff-path">{f.file}</span>
                  <span className="mia-diff-counts">
                    {f.binary ? (
                      "binary"
                    ) : (
                      <>
                        <span className="mia-diff-add-count">+{f.additions}</span>{" "}
                        <span className="mia-diff-del-count">−{f.deletions}</span>
                      </>
                    )}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          <div ref={filesRef} className="mia-diff-files">
            {diff.files.map((f) => (
              <FileSection
                key={f.file}
                file={f}
                mode={mode}
                expanded={expanded[f.file] ?? false}
                onToggle={toggle}
                onOpen={onOpenFile}
              />
            ))}
          </div>
        </>
      )}
    </div>
  );
}

/**
 * The files a person folded or unfolded, per diff scope (a session, a
 * message, a step): a diff view drawn again (a panel reopened, a new turn,
 * a session switch) keeps those choices for the files it still shows.
 */
const folding = new Map<string, Record<string, boolean>>();
const MAX_REMEMBERED_SCOPES = 200;

/** Forget every remembered folding (tests). */
export function resetDiffFolding(): void {
  folding.clear();
}

function scopeKey(diff: DiffViewData): string {
  return JSON.stringify(diff.scope);
}

function remember(diff: DiffViewData, path: string, open: boolean) {
  const key = scopeKey(diff);
  folding.delete(key);
  folding.set(key, { ...folding.get(key), [path]: open });
  if (folding.size > MAX_REMEMBERED_SCOPES) {
    const oldest = folding.keys().next().value;
    if (oldest !== undefined) folding.delete(oldest);
  }
}

function expandedMap(diff: DiffViewData): Record<string, boolean> {
  const open = initiallyExpanded(diff.files);
  const chosen = folding.get(scopeKey(diff)) ?? {};
  return Object.fromEntries(diff.files.map((f, i) => [f.file, chosen[f.file] ?? open[i] ?? false]));
}
