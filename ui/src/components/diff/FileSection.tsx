import { memo, useId, useMemo } from "react";
import type { FileDiff } from "../../protocol/generated";
import { HunkHighlighter, languageFor } from "./highlight";
import { VIRTUAL_FILE_LINES, fileRows, lineCount } from "./model";
import { PlainRows, VirtualRows } from "./Rows";

export type DiffMode = "split" | "unified";

interface FileSectionProps {
  file: FileDiff;
  mode: DiffMode;
  expanded: boolean;
  onToggle: (path: string) => void;
  /** "Open in editor" (at the first changed line). */
  onOpen?: (path: string, line?: number) => void;
}

/** One file of a diff: `■ path [status]` header and its hunks (or why they are not shown). */
export const FileSection = memo(function FileSection({ file, mode, expanded, onToggle, onOpen }: FileSectionProps) {
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
            {expanded ? "▾" : "▸"}
          </button>
        )}
        <h3 className="mia-diff-file-title" tabIndex={-1}>
          <span aria-hidden="true">■ </span>
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
          <FileHunks file={file} mode={mode} virtual={count > VIRTUAL_FILE_LINES} />
        ) : (
          <p className="mia-diff-note">
            {count.toLocaleString("en-US")} lines hidden{" "}
            <button type="button" className="mia-diff-btn" onClick={() => onToggle(file.file)}>
              Show {count.toLocaleString("en-US")} lines
            </button>
          </p>
        )}
      </div>
    </section>
  );
});

function FileHunks({ file, mode, virtual }: { file: FileDiff; mode: DiffMode; virtual: boolean }) {
  const rows = useMemo(() => fileRows(file, mode), [file, mode]);
  // Highlighting is lazy and cached per file: only rows that are rendered pay for it.
  const hl = useMemo(() => new HunkHighlighter(file, languageFor(file.file)), [file]);
  return virtual ? <VirtualRows rows={rows} mode={mode} hl={hl} /> : <PlainRows rows={rows} mode={mode} hl={hl} />;
}
