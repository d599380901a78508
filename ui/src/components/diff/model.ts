import type { ReactNode } from "react";
import type { FileDiff, Hunk, LineType } from "../../protocol/generated";

/** One line of a hunk with both line numbers and its position on each side worked out. */
export interface NumberedLine {
  type: LineType;
  content: string;
  oldNo: number | null;
  newNo: number | null;
  noNewline: boolean;
  /** Which hunk of the file it belongs to. */
  hunk: number;
  /** Index among the hunk's before-side lines (context + deletions), for highlighting. */
  oldIdx: number | null;
  /** Index among the hunk's after-side lines (context + additions). */
  newIdx: number | null;
  /** A changed line's counterpart (the deletion an addition replaces, or the reverse): for word highlighting. */
  pair?: string;
}

/** What one table row shows. */
export type Row =
  | { kind: "hunk"; header: string; hunk: number }
  | { kind: "line"; line: NumberedLine }
  /** Side by side: before on the left, after on the right (either may be empty). */
  | { kind: "pair"; left: NumberedLine | null; right: NumberedLine | null }
  /** Something the caller shows under a line (a comment, the comment editor). */
  | { kind: "extra"; key: string; node: ReactNode };

/** `@@ -a,b +c,d @@` (git's header). */
export function hunkHeader(h: Hunk): string {
  return `@@ -${h.startBefore},${h.linesBefore} +${h.startAfter},${h.linesAfter} @@`;
}

/** The hunk's lines with old/new numbers (explicit numbers win; else counted from the hunk start). */
export function numberLines(h: Hunk, hunk: number): NumberedLine[] {
  let oldNo = h.startBefore;
  let oldIdx = 0;
  let newIdx = 0;
  const lines: NumberedLine[] = h.lines.map((l) => {
    const base = { type: l.type, content: l.content, noNewline: l.noNewline === true, hunk };
    switch (l.type) {
      case "add":
        return { ...base, oldNo: null, newNo: l.newLine ?? l.lineNumber, oldIdx: null, newIdx: newIdx++ };
      case "delete": {
        const o = l.oldLine ?? l.lineNumber;
        oldNo = o + 1;
        return { ...base, oldNo: o, newNo: null, oldIdx: oldIdx++, newIdx: null };
      }
      default: {
        const o = l.oldLine ?? oldNo;
        oldNo = o + 1;
        return { ...base, oldNo: o, newNo: l.newLine ?? l.lineNumber, oldIdx: oldIdx++, newIdx: newIdx++ };
      }
    }
  });
  pairChanges(lines);
  return lines;
}

/** A run of deletions faces the additions after it, line by line: each learns its counterpart. */
function pairChanges(lines: NumberedLine[]): void {
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.type === "context") {
      i++;
      continue;
    }
    const dels: NumberedLine[] = [];
    const adds: NumberedLine[] = [];
    while (i < lines.length && lines[i]!.type === "delete") dels.push(lines[i++]!);
    while (i < lines.length && lines[i]!.type === "add") adds.push(lines[i++]!);
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
      dels[k]!.pair = adds[k]!.content;
      adds[k]!.pair = dels[k]!.content;
    }
  }
}

/** Pair a hunk's lines for side-by-side display: a run of deletions faces the additions after it. */
function pairRows(lines: NumberedLine[], rows: Row[]): void {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.type === "context") {
      rows.push({ kind: "pair", left: line, right: line });
      i++;
      continue;
    }
    const dels: NumberedLine[] = [];
    const adds: NumberedLine[] = [];
    while (i < lines.length && lines[i]!.type === "delete") dels.push(lines[i++]!);
    while (i < lines.length && lines[i]!.type === "add") adds.push(lines[i++]!);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push({ kind: "pair", left: dels[k] ?? null, right: adds[k] ?? null });
    }
  }
}

/** The rows of a file in either layout: each hunk's header, then its lines. */
export function fileRows(file: FileDiff, mode: "split" | "unified"): Row[] {
  const rows: Row[] = [];
  file.hunks.forEach((h, i) => {
    rows.push({ kind: "hunk", header: hunkHeader(h), hunk: i });
    const lines = numberLines(h, i);
    if (mode === "split") pairRows(lines, rows);
    else for (const line of lines) rows.push({ kind: "line", line });
  });
  return rows;
}

/** The after-side line number a row shows (where a comment on it goes); null for a deletion. */
export function rowLine(row: Row): number | null {
  if (row.kind === "line") return row.line.type === "delete" ? null : row.line.newNo;
  if (row.kind === "pair") return row.right?.newNo ?? null;
  return null;
}

/** How many hunk lines a file has (what rendering it costs). */
export function lineCount(file: FileDiff): number {
  let n = 0;
  for (const h of file.hunks) n += h.lines.length;
  return n;
}

/** Files above this many lines are rendered in a virtualised scroll box. */
export const VIRTUAL_FILE_LINES = 300;
/** What a virtualised file costs to show (about the rows it keeps in the page). */
const VIRTUAL_COST = 100;
/** Once this many lines are shown, the remaining files start collapsed behind "Show". */
export const EXPANDED_BUDGET = 1200;

/** Which files start expanded, within a rendering budget (a huge diff never freezes the page). */
export function initiallyExpanded(files: FileDiff[]): boolean[] {
  let shown = 0;
  return files.map((f) => {
    if (f.binary) return true; // nothing to render but a note
    const n = lineCount(f);
    const cost = n > VIRTUAL_FILE_LINES ? VIRTUAL_COST : n;
    if (shown > 0 && shown + cost > EXPANDED_BUDGET) return false;
    shown += cost;
    return true;
  });
}
