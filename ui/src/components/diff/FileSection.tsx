import { memo, useMemo } from "react";
import type { ReactNode } from "react";
import type { FileDiff } from "../../protocol/generated";
import { highlightLines, languageFor } from "./highlight";
import type { Token } from "./highlight";
import { hunkHeader, lineCount, numberLines, splitRows } from "./model";
import type { NumberedLine } from "./model";

export type DiffMode = "split" | "unified";

interface FileSectionProps {
  file: FileDiff;
  mode: DiffMode;
  expanded: boolean;
  onToggle(path: string): void;
}

interface Highlighted {
  before: Token[][] | null;
  after: Token[][] | null;
}

/** One file of a diff: `■ path [status]` header and its hunks (or why they are not shown). */
export const FileSection = memo(function FileSection({ file, mode, expanded, onToggle }: FileSectionProps) {
  const count = lineCount(file);
  const binary = file.binary === true;
  const bodyId = `diff-body-${file.file}`;
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
      </header>
      <div id={bodyId} className="mia-diff-file-body">
        {binary ? (
          <p className="mia-diff-note">binary file, not diffed</p>
        ) : count === 0 ? (
          <p className="mia-diff-note">{file.status === "modified" ? "no content change" : "empty file"}</p>
        ) : expanded ? (
          <FileHunks file={file} mode={mode} />
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

function FileHunks({ file, mode }: { file: FileDiff; mode: DiffMode }) {
  // Highlighting runs once per file and only for files being shown.
  const hl = useMemo<Highlighted>(() => {
    const lang = languageFor(file.file);
    return { before: highlightLines(file.before, lang), after: highlightLines(file.after, lang) };
  }, [file.file, file.before, file.after]);
  const hunks = useMemo(() => file.hunks.map((h) => ({ header: hunkHeader(h), lines: numberLines(h) })), [file.hunks]);

  return (
    <div className="mia-diff-scroll">
      <table className={`mia-diff-table mia-diff-${mode}`}>
        {mode === "split" ? (
          <colgroup>
            <col className="mia-diff-col-no" />
            <col />
            <col className="mia-diff-col-no" />
            <col />
          </colgroup>
        ) : (
          <colgroup>
            <col className="mia-diff-col-no" />
            <col className="mia-diff-col-no" />
            <col />
          </colgroup>
        )}
        {hunks.map((h, i) => (
          <tbody key={i}>
            <tr className="mia-diff-hunk-header">
              <td colSpan={mode === "split" ? 4 : 3}>{h.header}</td>
            </tr>
            {mode === "split"
              ? splitRows(h.lines).map((row, k) => (
                  <tr key={k}>
                    <SideCells line={row.left} side="left" hl={hl} />
                    <SideCells line={row.right} side="right" hl={hl} />
                  </tr>
                ))
              : h.lines.map((line, k) => (
                  <tr key={k} className={`mia-diff-row-${line.type}`}>
                    <td className="mia-diff-no">{line.oldNo ?? ""}</td>
                    <td className="mia-diff-no">{line.newNo ?? ""}</td>
                    <ContentCell line={line} hl={hl} />
                  </tr>
                ))}
          </tbody>
        ))}
      </table>
    </div>
  );
}

function SideCells({ line, side, hl }: { line: NumberedLine | null; side: "left" | "right"; hl: Highlighted }) {
  if (!line) {
    return (
      <>
        <td className="mia-diff-no mia-diff-empty" />
        <td className="mia-diff-code mia-diff-empty" />
      </>
    );
  }
  const no = side === "left" ? line.oldNo : line.newNo;
  return (
    <>
      <td className={`mia-diff-no mia-diff-no-${line.type}`}>{no ?? ""}</td>
      <ContentCell line={line} hl={hl} />
    </>
  );
}

const MARKER = { add: "+", delete: "-", context: " " } as const;

function ContentCell({ line, hl }: { line: NumberedLine; hl: Highlighted }) {
  const testId = line.type === "add" ? "diff-line-add" : line.type === "delete" ? "diff-line-del" : undefined;
  const tokens = line.type === "delete" ? lineTokens(hl.before, line.oldNo) : lineTokens(hl.after, line.newNo);
  return (
    <td className={`mia-diff-code mia-diff-${line.type}`} data-testid={testId}>
      <span className="mia-diff-marker" aria-hidden="true">
        {MARKER[line.type]}
      </span>
      {renderCode(line.content, tokens)}
      {line.noNewline && <span className="mia-diff-nonl"> ⏎ no newline at end of file</span>}
    </td>
  );
}

function lineTokens(lines: Token[][] | null, no: number | null): Token[] | undefined {
  if (!lines || no === null || no < 1) return undefined;
  return lines[no - 1];
}

function renderCode(content: string, tokens: Token[] | undefined): ReactNode {
  // Tokens come from the full file; use them only when they match the hunk's line exactly.
  if (tokens && tokens.map((t) => t.text).join("") === content) {
    return tokens.map((t, i) =>
      t.cls ? (
        <span key={i} className={t.cls}>
          {t.text}
        </span>
      ) : (
        t.text
      ),
    );
  }
  return content;
}
