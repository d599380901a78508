import { useMemo, useRef } from "react";
import type { ReactNode } from "react";
import { measureElement, observeElementRect, useVirtualizer } from "@tanstack/react-virtual";
import type { HunkHighlighter, Token } from "./highlight";
import type { NumberedLine, Row } from "./model";
import { useFileRows } from "./rowsContext";
import { changedRanges, segments } from "./wordDiff";

type Mode = "split" | "unified";

interface RowsProps {
  rows: Row[];
  mode: Mode;
  hl: HunkHighlighter;
}

function Columns({ mode }: { mode: Mode }) {
  return mode === "split" ? (
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
  );
}

/** Every row in the page (files up to a few hundred lines). */
export function PlainRows({ rows, mode, hl }: RowsProps) {
  return (
    <div className="mia-diff-scroll">
      <table className={`mia-diff-table mia-diff-${mode}`}>
        <Columns mode={mode} />
        <tbody>
          {rows.map((row, i) => (
            <RowView key={i} row={row} mode={mode} hl={hl} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

const ROW_PX = 19;
const VIEWPORT_PX = 560;
const NO_LAYOUT_RECT = { width: 960, height: VIEWPORT_PX };

/** Large files: a scroll box that keeps only the visible rows in the page. */
export function VirtualRows({ rows, mode, hl }: RowsProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- a notice for React Compiler, which this app does not use (nothing here memoises the virtualizer's results)
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_PX,
    overscan: 20,
    // Before layout, and where there is no layout (a hidden panel, jsdom), assume the box's full
    // height and the estimated row height, so a sensible window of rows is rendered.
    initialRect: NO_LAYOUT_RECT,
    observeElementRect: (instance, cb) =>
      observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : NO_LAYOUT_RECT)),
    measureElement: (el, entry, instance) => measureElement(el, entry, instance) || ROW_PX,
  });
  const items = virtualizer.getVirtualItems();
  const top = items[0]?.start ?? 0;
  const bottom = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);
  const span = mode === "split" ? 4 : 3;
  return (
    <div
      ref={scrollRef}
      className="mia-diff-virtual"
      style={{ maxHeight: VIEWPORT_PX }}
      tabIndex={0}
      role="region"
      aria-label={`${rows.length.toLocaleString("en-US")} diff rows`}
    >
      <table className={`mia-diff-table mia-diff-${mode}`}>
        <Columns mode={mode} />
        <tbody>
          {top > 0 && (
            <tr aria-hidden="true" className="mia-diff-spacer" style={{ height: top }}>
              <td colSpan={span} />
            </tr>
          )}
          {items.map((item) => (
            <RowView
              key={item.key}
              row={rows[item.index]!}
              mode={mode}
              hl={hl}
              index={item.index}
              measure={virtualizer.measureElement}
            />
          ))}
          {bottom > 0 && (
            <tr aria-hidden="true" className="mia-diff-spacer" style={{ height: bottom }}>
              <td colSpan={span} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

interface RowViewProps {
  row: Row;
  mode: Mode;
  hl: HunkHighlighter;
  index?: number;
  measure?: (el: Element | null) => void;
}

function RowView({ row, mode, hl, index, measure }: RowViewProps) {
  const common = { "data-index": index, ref: measure };
  const span = mode === "split" ? 4 : 3;
  const { selected } = useFileRows();
  switch (row.kind) {
    case "hunk":
      return <HunkHeaderRow header={row.header} hunk={row.hunk} span={span} common={common} />;
    case "extra":
      return (
        <tr className="mia-diff-extra" {...common}>
          <td colSpan={span}>{row.node}</td>
        </tr>
      );
    case "line":
      return (
        <tr className={`mia-diff-row-${row.line.type}${isSelected(selected, row.line) ? " mia-diff-selected" : ""}`} {...common}>
          <td className="mia-diff-no">{row.line.oldNo ?? ""}</td>
          <NewNumberCell line={row.line} className="mia-diff-no" />
          <ContentCell line={row.line} hl={hl} />
        </tr>
      );
    case "pair":
      return (
        <tr className={isSelected(selected, row.right) ? "mia-diff-selected" : undefined} {...common}>
          <SideCells line={row.left} side="left" hl={hl} />
          <SideCells line={row.right} side="right" hl={hl} />
        </tr>
      );
  }
}

function HunkHeaderRow({
  header,
  hunk,
  span,
  common,
}: {
  header: string;
  hunk: number;
  span: number;
  common: { "data-index"?: number; ref?: (el: Element | null) => void };
}) {
  const { hunkActions } = useFileRows();
  const actions = hunkActions?.(hunk);
  return (
    <tr className="mia-diff-hunk-header" data-testid="diff-hunk" data-hunk={hunk} {...common}>
      <td colSpan={span}>
        {actions ? (
          <div className="mia-diff-hunk-bar">
            <span>{header}</span>
            <span className="mia-diff-hunk-actions" role="group" aria-label={`Actions for hunk ${header}`}>
              {actions}
            </span>
          </div>
        ) : (
          header
        )}
      </td>
    </tr>
  );
}

function isSelected(selected: readonly [number, number] | null | undefined, line: NumberedLine | null): boolean {
  if (!selected || !line || line.type === "delete" || line.newNo === null) return false;
  return line.newNo >= selected[0] && line.newNo <= selected[1];
}

/** The after-side line number: a button that comments on the line when commenting is offered. */
function NewNumberCell({ line, className }: { line: NumberedLine; className: string }) {
  const { onGutter, file } = useFileRows();
  const no = line.type === "delete" ? null : line.newNo;
  if (!onGutter || no === null) return <td className={className}>{line.newNo ?? ""}</td>;
  return (
    <td className={className}>
      <button
        type="button"
        className="mia-diff-gutter"
        data-testid="diff-gutter"
        data-line={no}
        aria-label={`Comment on line ${no} of ${file} (Shift: a range)`}
        title="Comment on this line (Shift+click: up to this line)"
        onClick={(e) => onGutter(no, e.shiftKey)}
      >
        {no}
      </button>
    </td>
  );
}

function SideCells({ line, side, hl }: { line: NumberedLine | null; side: "left" | "right"; hl: HunkHighlighter }) {
  if (!line) {
    return (
      <>
        <td className="mia-diff-no mia-diff-empty" />
        <td className="mia-diff-code mia-diff-empty" />
      </>
    );
  }
  const cls = `mia-diff-no mia-diff-no-${line.type}`;
  return (
    <>
      {side === "left" ? <td className={cls}>{line.oldNo ?? ""}</td> : <NewNumberCell line={line} className={cls} />}
      <ContentCell line={line} hl={hl} />
    </>
  );
}

const MARKER = { add: "+", delete: "-", context: " " } as const;

function ContentCell({ line, hl }: { line: NumberedLine; hl: HunkHighlighter }) {
  const testId = line.type === "add" ? "diff-line-add" : line.type === "delete" ? "diff-line-del" : undefined;
  const tokens = hl.tokens(line);
  const code = useMemo(() => renderCode(line, tokens), [line, tokens]);
  return (
    <td className={`mia-diff-code mia-diff-${line.type}`} data-testid={testId}>
      <span className="mia-diff-marker" aria-hidden="true">
        {MARKER[line.type]}
      </span>
      {code}
      {line.noNewline && <span className="mia-diff-nonl"> ⏎ no newline at end of file</span>}
    </td>
  );
}

/** Syntax tokens, with the words that differ from the counterpart line marked. */
function renderCode(line: NumberedLine, tokens: Token[] | undefined): ReactNode {
  const ranges = line.pair === undefined ? [] : changedRanges(line.content, line.pair);
  if (!tokens && ranges.length === 0) return line.content;
  return segments(line.content, tokens, ranges).map((t, i) => {
    const cls = [t.cls, t.changed ? `mia-diff-word mia-diff-word-${line.type}` : undefined].filter(Boolean).join(" ");
    return cls ? (
      <span key={i} className={cls}>
        {t.text}
      </span>
    ) : (
      t.text
    );
  });
}
