import type { FileDiff, Hunk, LineType } from "../../protocol/generated";

/** One line of a hunk with both line numbers worked out. */
export interface NumberedLine {
  type: LineType;
  content: string;
  oldNo: number | null;
  newNo: number | null;
  noNewline: boolean;
}

/** A side-by-side row: before on the left, after on the right (either may be empty). */
export interface SplitRow {
  left: NumberedLine | null;
  right: NumberedLine | null;
}

/** `@@ -a,b +c,d @@` (git's header). */
export function hunkHeader(h: Hunk): string {
  return `@@ -${h.startBefore},${h.linesBefore} +${h.startAfter},${h.linesAfter} @@`;
}

/** The hunk's lines with old/new numbers (explicit numbers win; else counted from the hunk start). */
export function numberLines(h: Hunk): NumberedLine[] {
  let oldNo = h.startBefore;
  let newNo = h.startAfter;
  return h.lines.map((l) => {
    const noNewline = l.noNewline === true;
    switch (l.type) {
      case "add": {
        const n = l.newLine ?? l.lineNumber;
        newNo = n + 1;
        return { type: l.type, content: l.content, oldNo: null, newNo: n, noNewline };
      }
      case "delete": {
        const o = l.oldLine ?? l.lineNumber;
        oldNo = o + 1;
        return { type: l.type, content: l.content, oldNo: o, newNo: null, noNewline };
      }
      default: {
        const o = l.oldLine ?? oldNo;
        const n = l.newLine ?? l.lineNumber;
        oldNo = o + 1;
        newNo = n + 1;
        return { type: l.type, content: l.content, oldNo: o, newNo: n, noNewline };
      }
    }
  });
}

/** Pair a hunk's lines for side-by-side display: a run of deletions faces the additions after it. */
export function splitRows(lines: NumberedLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.type === "context") {
      rows.push({ left: line, right: line });
      i++;
      continue;
    }
    const dels: NumberedLine[] = [];
    const adds: NumberedLine[] = [];
    while (i < lines.length && lines[i]!.type === "delete") dels.push(lines[i++]!);
    while (i < lines.length && lines[i]!.type === "add") adds.push(lines[i++]!);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push({ left: dels[k] ?? null, right: adds[k] ?? null });
    }
  }
  return rows;
}

/** How many hunk lines a file has (what rendering it costs). */
export function lineCount(file: FileDiff): number {
  let n = 0;
  for (const h of file.hunks) n += h.lines.length;
  return n;
}

/** Files above this many lines start collapsed behind a "show" button. */
export const LARGE_FILE_LINES = 1000;
/** Once this many lines are shown, the remaining files start collapsed too. */
export const EXPANDED_BUDGET = 4000;

/** Which files start expanded: not the large ones, and not past the budget. */
export function initiallyExpanded(files: FileDiff[]): boolean[] {
  let shown = 0;
  return files.map((f) => {
    if (f.binary) return true; // nothing to render but a note
    const n = lineCount(f);
    if (n > LARGE_FILE_LINES || shown + n > EXPANDED_BUDGET) return false;
    shown += n;
    return true;
  });
}
