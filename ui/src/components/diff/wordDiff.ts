// Word-level changes inside a changed line and the line it replaces: which words differ, as
// character ranges of each side (an LCS over words, spaces and punctuation).
import type { Token } from "./highlight";

/** [start, end) in characters. */
export type Range = readonly [number, number];

const TOKEN = /[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu;
/** Lines with more tokens than this are not compared word by word (cost is tokens²). */
const MAX_TOKENS = 400;
/** Below this share of unchanged text the lines are unrelated: nothing is marked. */
const MIN_COMMON = 0.3;

function tokenize(s: string): string[] {
  return s.match(TOKEN) ?? [];
}

/**
 * The changed ranges of `text` against `other` (its counterpart on the other side). Empty when
 * the lines are the same, too long, or so different that marking words would mark everything.
 */
export function changedRanges(text: string, other: string): Range[] {
  if (text === other) return [];
  const a = tokenize(text);
  const b = tokenize(other);
  if (a.length === 0 || b.length === 0 || a.length > MAX_TOKENS || b.length > MAX_TOKENS) return [];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const w = b.length + 1;
  const lcs = new Uint16Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const kept = new Array<boolean>(a.length).fill(false);
  let common = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      kept[i] = true;
      if (a[i]!.trim()) common += a[i]!.length;
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) i++;
    else j++;
  }
  const visible = Math.max(text.replace(/\s/g, "").length, other.replace(/\s/g, "").length);
  if (visible === 0 || common / visible < MIN_COMMON) return [];
  const ranges: [number, number][] = [];
  let pos = 0;
  a.forEach((tok, i) => {
    const end = pos + tok.length;
    if (!kept[i]) {
      const last = ranges[ranges.length - 1];
      if (last && last[1] === pos) last[1] = end;
      else ranges.push([pos, end]);
    }
    pos = end;
  });
  // Spaces alone between two changed words join them; a range of spaces alone is not marked.
  return joinAcrossSpaces(ranges, text).filter(([s, e]) => text.slice(s, e).trim() !== "");
}

function joinAcrossSpaces(ranges: [number, number][], text: string): [number, number][] {
  const out: [number, number][] = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    if (last && text.slice(last[1], r[0]).trim() === "") last[1] = r[1];
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** One piece of a line to render: its text, its syntax classes, whether it is a changed word. */
export interface Segment {
  text: string;
  cls?: string;
  changed: boolean;
}

/** The line's syntax tokens (or its plain text) cut at the changed ranges. */
export function segments(content: string, tokens: Token[] | undefined, ranges: Range[]): Segment[] {
  const base = tokens ?? [{ text: content }];
  if (ranges.length === 0) return base.map((t) => ({ text: t.text, cls: t.cls, changed: false }));
  const out: Segment[] = [];
  let pos = 0;
  let r = 0;
  for (const t of base) {
    let offset = 0;
    while (offset < t.text.length) {
      const at = pos + offset;
      while (r < ranges.length && ranges[r]![1] <= at) r++;
      const range = ranges[r];
      const inside = range !== undefined && range[0] <= at;
      const stop = range === undefined ? Infinity : inside ? range[1] : range[0];
      const len = Math.min(t.text.length - offset, stop - at);
      out.push({ text: t.text.slice(offset, offset + len), cls: t.cls, changed: inside });
      offset += len;
    }
    pos += t.text.length;
  }
  return out;
}
