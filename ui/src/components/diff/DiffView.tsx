import { useCallback, useMemo, useRef, useState, type ReactNode } from "react";
import type { DiffView as DiffViewData, FileDiff } from "../../protocol/generated";
import { FileSection, type LineExtra } from "./FileSection";
import type { DiffMode } from "./FileSection";
import { FileTree } from "./FileTree";
import { initiallyExpanded } from "./model";
import type { DiffComment, DiffLineTarget } from "./types";
import { useWidth } from "./useWidth";
import "./DiffView.css";

export type { DiffViewData, DiffMode, DiffComment, DiffLineTarget };

/** Narrower than this (px), side by side does not fit: the diff is shown unified. */
export const NARROW_PX = 700;
/** More changed files than this: the file list is a tree of folders. */
export const TREE_FILES = 8;

export interface DiffViewProps {
  diff: DiffViewData;
  /** Side-by-side (default) or unified. */
  defaultMode?: DiffMode;
  /** Copy the patch; default: the system clipboard. */
  onCopyPatch?: (patch: string) => void | Promise<void>;
  /** "Open in editor" for a file of the diff (absent: no button). */
  onOpenFile?: (path: string, line?: number) => void;
  /** Line numbers become buttons: a click comments on that line, Shift+click on the range from the last one. */
  onComment?: (target: DiffLineTarget) => void;
  /** Comments shown under their lines. */
  comments?: DiffComment[];
  /** How a comment is drawn (default: its text). */
  renderComment?: (comment: DiffComment) => ReactNode;
  /** An editor (the caller's) shown under the lines being commented on; they are marked. */
  commentEditor?: { target: DiffLineTarget; node: ReactNode } | null;
  /** Buttons in each hunk's header (Stage, Discard, Take …); hunk: its index in `file.hunks`. */
  hunkActions?: (file: FileDiff, hunk: number) => ReactNode;
  /**
   * Inside something that already says what changes (an undo preview, a step, a permission ask):
   * no summary line, no file list (each file's header names it and its counts), no outer frame.
   */
  compact?: boolean;
}

type CopyState = { state: "idle" } | { state: "copied" } | { state: "failed"; message: string };

const STATUS_BADGE = { added: "A", modified: "M", deleted: "D" } as const;

function copyToClipboard(patch: string): Promise<void> {
  if (!navigator.clipboard) return Promise.reject(new Error("the clipboard is not available here"));
  return navigator.clipboard.writeText(patch);
}

/** A diff (spec 077): summary, file list, per-file hunks side by side or unified, copy as patch. */
export function DiffView({
  diff,
  defaultMode = "split",
  onCopyPatch,
  onOpenFile,
  onComment,
  comments,
  renderComment,
  commentEditor,
  hunkActions,
  compact = false,
}: DiffViewProps) {
  const [chosen, setMode] = useState<DiffMode>(defaultMode);
  const rootRef = useRef<HTMLDivElement>(null);
  const width = useWidth(rootRef);
  // Side by side in a narrow box would push the after-column out of sight: unified there.
  const narrow = width !== null && width < NARROW_PX;
  const mode: DiffMode = narrow ? "unified" : chosen;
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

  // The last line clicked (Shift+click extends from it).
  const anchor = useRef<{ file: string; line: number } | null>(null);
  const extras = useMemo(
    () => lineExtras(comments ?? [], commentEditor ?? null, renderComment ?? defaultComment),
    [comments, commentEditor, renderComment],
  );
  // Where a Shift+click extends from: the open editor's first line (it outlives a redraw of the
  // diff, e.g. when the changes are read again), else the last line clicked.
  const openAt = commentEditor?.target ?? null;
  const onGutter = useCallback(
    (file: string, line: number, extend: boolean) => {
      if (!onComment) return;
      const from = openAt ? { file: openAt.file, line: openAt.line } : anchor.current;
      if (extend && from && from.file === file) {
        onComment({ file, line: Math.min(from.line, line), endLine: Math.max(from.line, line) });
        return;
      }
      anchor.current = { file, line };
      onComment({ file, line, endLine: line });
    },
    [onComment, openAt],
  );
  const target = commentEditor?.target ?? null;

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
    <div className={compact ? "mia-diff mia-diff-compact" : "mia-diff"} data-testid="diff-view" data-mode={mode} ref={rootRef}>
      <div className="mia-diff-toolbar">
        {compact ? (
          <span className="mia-diff-summary" />
        ) : (
          <p className="mia-diff-summary" data-testid="diff-summary">
            {diff.summary}
          </p>
        )}
        <div className="mia-diff-modes" role="group" aria-label="Diff layout">
          <button
            type="button"
            className="mia-diff-btn"
            data-testid="diff-mode-split"
            aria-pressed={mode === "split"}
            disabled={narrow}
            title={narrow ? "Too narrow for side by side: widen the view" : undefined}
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
          {compact ? null : diff.files.length > TREE_FILES ? (
            <FileTree files={diff.files} onJump={jumpTo} />
          ) : (
            <FileList files={diff.files} onJump={jumpTo} />
          )}
          <div ref={filesRef} className="mia-diff-files">
            {diff.files.map((f) => (
              <FileSection
                key={f.file}
                file={f}
                mode={mode}
                expanded={expanded[f.file] ?? false}
                onToggle={toggle}
                onOpen={onOpenFile}
                extras={extras.get(f.file)}
                onGutter={onComment ? onGutter : undefined}
                hunkActions={hunkActions}
                selected={target?.file === f.file ? target : null}
              />
            ))}
          </div>
        </>
      )}
    </div>
  );
}

function FileList({ files, onJump }: { files: FileDiff[]; onJump: (index: number) => void }) {
  return (
    <ul className="mia-diff-file-list" data-testid="diff-file-list" aria-label="Changed files">
      {files.map((f, i) => (
        <li key={f.file}>
          <button type="button" className="mia-diff-file-link" onClick={() => onJump(i)}>
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
  );
}

function defaultComment(c: DiffComment): ReactNode {
  return (
    <div className="mia-diff-comment" data-testid="diff-comment" data-outdated={c.outdated ? "true" : undefined}>
      {c.text}
    </div>
  );
}

/** Per file: its comments and the open editor, each under its last line. */
function lineExtras(
  comments: DiffComment[],
  editor: { target: DiffLineTarget; node: ReactNode } | null,
  render: (c: DiffComment) => ReactNode,
): Map<string, LineExtra[]> {
  const out = new Map<string, LineExtra[]>();
  const add = (file: string, x: LineExtra) => out.set(file, [...(out.get(file) ?? []), x]);
  for (const c of comments) add(c.file, { line: c.endLine, key: `c:${c.id}`, node: render(c) });
  if (editor) add(editor.target.file, { line: editor.target.endLine, key: "editor", node: editor.node });
  return out;
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
