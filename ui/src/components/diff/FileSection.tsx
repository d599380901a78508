import { memo, useId, useMemo, type ReactNode } from "react";
import { ChevronDown, ChevronRight, FileText } from "lucide-react";
import type { FileDiff } from "../../protocol/generated";
import { HunkHighlighter, languageFor } from "./highlight";
import { VIRTUAL_FILE_LINES, fileRows, lineCount, rowLine, type Row } from "./model";
import { PlainRows, VirtualRows } from "./Rows";
import { FileRowsContext, type FileRowsOptions } from "./rowsContext";

export type DiffMode = "split" | "unified";

/** Something shown under an after-side line of a file (a comment, the comment editor). */
export interface LineExtra {
  line: number;
  key: string;
  node: ReactNode;
}

interface FileSectionProps {
  file: FileDiff;
  mode: DiffMode;
  expanded: boolean;
  onToggle: (path: string) => void;
  /** "Open in editor" (at the first changed line). */
  onOpen?: (path: string, line?: number) => void;
  /** Shown under their lines (those whose line is not in the diff: after the hunks). */
  extras?: LineExtra[];
  /** The line numbers' buttons (comment on a line; `extend`: Shift held). */
  onGutter?: (file: string, line: number, extend: boolean) => void;
  /** Buttons in each hunk's header. */
  hunkActions?: (file: FileDiff, hunk: number) => ReactNode;
  /** The lines being commented on. */
  selected?: { line: number; endLine: number } | null;
}

/** One file of a diff: file icon, `path [status]` header and its hunks (or why they are not shown). */
export const FileSection = memo(function FileSection({
  file,
  mode,
  expanded,
  onToggle,
  onOpen,
  extras,
  onGutter,
  hunkActions,
  selected,
}: FileSectionProps) {
  const rowsOptions = useMemo<FileRowsOptions>(
    () => ({
      file: file.file,
      onGutter: onGutter ? (line, extend) => onGutter(file.file, line, extend) : undefined,
      hunkActions: hunkActions ? (h) => hunkActions(file, h) : undefined,
      selected: selected ? ([selected.line, selected.endLine] as const) : null,
    }),
    [file, onGutter, hunkActions, selected],
  );
  const count = lineCount(file);
  const binary = file.binary === true;
  const bodyId = useId();
  return (
    <section className={`mia-diff-file mia-diff-status-${file.status}`} data-testid="diff-file" data-path={file.file}>
      <header className="mia-diff-file-header">
        {!binary && count > 0 && (
          <button
            type="button"
            className="mia-diff-fold"
            aria-expanded={expanded}
            aria-controls={bodyId}
            aria-label={expanded ? `Collapse ${file.file}` : `Expand ${file.file}`}
            onClick={() => onToggle(file.file)}
          >
            {expanded ? <ChevronDown size={14} aria-hidden /> : <ChevronRight size={14} aria-hidden />}
          </button>
        )}
        <h3 className="mia-diff-file-title" tabIndex={-1}>
          <FileText size={13} aria-hidden className="mia-diff-file-icon" />{" "}
          <span className="mia-diff-path">{file.file}</span>{" "}
          <span className={`mia-diff-status mia-diff-status-badge-${file.status}`}>[{file.status}]</span>
        </h3>
        <span className="mia-diff-counts">
          <span className="mia-diff-add-count">+{file.additions}</span>{" "}
          <span className="mia-diff-del-count">−{file.deletions}</span>
        </span>
        {file.oldMode && file.newMode && file.oldMode !== file.newMode && (
          <span className="mia-diff-mode-change">
            mode {file.oldMode} → {file.newMode}
          </span>
        )}
        {onOpen && file.status !== "deleted" && (
          <button
            type="button"
            className="mia-diff-open"
            data-testid="diff-open-file"
            title={`Open ${file.file} in the editor`}
            onClick={() => onOpen(file.file, file.hunks[0]?.startAfter || undefined)}
          >
            Open
          </button>
        )}
        {file.lineEndings && (
          <span className="mia-diff-mode-change" title="The line endings changed: lines may look the same on both sides.">
            line endings {file.lineEndings}
          </span>
        )}
      </header>
      <div id={bodyId} className="mia-diff-file-body">
        {binary ? (
          <p className="mia-diff-note">binary file, not diffed</p>
        ) : count === 0 ? (
          <p className="mia-diff-note">{file.status === "modified" ? "no content change" : "empty file"}</p>
        ) : expanded ? (
          <FileRowsContext.Provider value={rowsOptions}>
            <FileHunks file={file} mode={mode} virtual={count > VIRTUAL_FILE_LINES} extras={extras} />
          </FileRowsContext.Provider>
        ) : (
          <p className="mia-diff-note">
            {count.toLocaleString("en-US")} lines hidden{" "}
            <button type="button" className="mia-diff-btn" onClick={() => onToggle(file.file)}>
              Show {count.toLocaleString("en-US")} lines
            </button>
          </p>
        )}
        {(!expanded || binary || count === 0) && extras?.map((x) => <div key={x.key}>{x.node}</div>)}
      </div>
    </section>
  );
});

function FileHunks({
  file,
  mode,
  virtual,
  extras,
}: {
  file: FileDiff;
  mode: DiffMode;
  virtual: boolean;
  extras?: LineExtra[];
}) {
  const lineRows = useMemo(() => fileRows(file, mode), [file, mode]);
  const { rows, unplaced } = useMemo(() => withExtras(lineRows, extras ?? []), [lineRows, extras]);
  // Highlighting is lazy and cached per file: only rows that are rendered pay for it.
  const hl = useMemo(() => new HunkHighlighter(file, languageFor(file.file)), [file]);
  return (
    <>
      {virtual ? <VirtualRows rows={rows} mode={mode} hl={hl} /> : <PlainRows rows={rows} mode={mode} hl={hl} />}
      {unplaced.map((x) => (
        <div key={x.key} className="mia-diff-unplaced">
          {x.node}
        </div>
      ))}
    </>
  );
}

/** The rows with each extra after the last row showing its line; those whose line is not shown apart. */
function withExtras(rows: Row[], extras: LineExtra[]): { rows: Row[]; unplaced: LineExtra[] } {
  if (extras.length === 0) return { rows, unplaced: [] };
  const lastRow = new Map<number, number>();
  rows.forEach((r, i) => {
    const line = rowLine(r);
    if (line !== null) lastRow.set(line, i);
  });
  const after = new Map<number, LineExtra[]>();
  const unplaced: LineExtra[] = [];
  for (const x of extras) {
    const at = lastRow.get(x.line);
    if (at === undefined) unplaced.push(x);
    else after.set(at, [...(after.get(at) ?? []), x]);
  }
  const out: Row[] = [];
  rows.forEach((r, i) => {
    out.push(r);
    for (const x of after.get(i) ?? []) out.push({ kind: "extra", key: x.key, node: x.node });
  });
  return { rows: out, unplaced };
}
