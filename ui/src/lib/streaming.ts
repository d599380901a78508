/**
 * Streaming-safe markdown helpers: split a growing text into blocks so finished
 * blocks can be memoised, and close constructs left open mid-stream.
 */

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/** Splits markdown into top-level blocks at blank lines outside code fences. */
export function splitBlocks(text: string): string[] {
  return split(text).blocks;
}

/** A split of a text, kept to split the same text grown longer (see `splitGrowing`). */
export interface Split {
  text: string;
  blocks: string[];
  /** Where the last block starts in `text`. */
  lastStart: number;
}

/**
 * `splitBlocks(text)` for a text that grew from `prev.text` (a streamed answer): only the part
 * from the previous last block on is split again, as the blocks before it cannot change (a block
 * ends only when a later line starts the next one, outside a fence). Any other text is split whole.
 */
export function splitGrowing(text: string, prev: Split | null): Split {
  if (!prev || !text.startsWith(prev.text)) return { text, ...split(text) };
  const tail = split(text.slice(prev.lastStart));
  return { text, blocks: prev.blocks.slice(0, -1).concat(tail.blocks), lastStart: prev.lastStart + tail.lastStart };
}

/** The last few splits of texts rendered block by block (the answers streaming on screen). */
const recent: Split[] = [];
const RECENT = 4;

/**
 * `splitBlocks(text)`, from the longest recent split whose text this one starts with (the same
 * answer a few tokens earlier), so a frame of a streamed answer splits only its last block.
 */
export function splitRendered(text: string): string[] {
  let from: Split | null = null;
  for (const r of recent) if ((!from || r.text.length > from.text.length) && text.startsWith(r.text)) from = r;
  if (from?.text === text) return from.blocks;
  const next = splitGrowing(text, from);
  const at = from ? recent.indexOf(from) : -1;
  if (at >= 0) recent.splice(at, 1);
  recent.push(next);
  if (recent.length > RECENT) recent.shift();
  return next.blocks;
}

function split(text: string): { blocks: string[]; lastStart: number } {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  let blank = false;
  let start = 0;
  let offset = 0;
  for (const line of text.split("\n")) {
    const at = offset;
    offset += line.length + 1;
    const m = FENCE.exec(line);
    if (m) {
      const marker = m[1]!;
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    }
    if (fence === null && line.trim() === "") {
      if (current.length) blank = true;
      continue;
    }
    if (blank) {
      blank = false;
      // An indented line continues the previous block (list item paragraphs, nested code).
      if (/^\s/.test(line)) current.push("");
      else {
        blocks.push(current.join("\n"));
        current = [];
      }
    }
    if (current.length === 0) start = at;
    current.push(line);
  }
  if (current.length) blocks.push(current.join("\n"));
  return { blocks, lastStart: start };
}

/**
 * Closes what a half-streamed block leaves open (a code fence, `**`, `` ` ``, `_`, `~~`)
 * so it renders as it will look when complete instead of as raw markers.
 */
export function closeOpenMarkdown(block: string): string {
  const lines = block.split("\n");
  let fence: string | null = null;
  for (const line of lines) {
    const m = FENCE.exec(line);
    if (!m) continue;
    const marker = m[1]!;
    if (fence === null) fence = marker;
    else if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
  }
  if (fence !== null) return `${block}\n${fence}`;
  let out = block;
  // Inline code first: markers inside it are literal.
  const ticks = (out.match(/`/g) ?? []).length;
  if (ticks % 2 === 1) out += "`";
  const outside = out.replace(/`[^`]*`/g, "");
  if ((outside.match(/\*\*/g) ?? []).length % 2 === 1) out = out.replace(/\s+$/, "") + "**";
  if ((outside.match(/~~/g) ?? []).length % 2 === 1) out += "~~";
  const singles = outside.replace(/\*\*/g, "").match(/(^|[^*\w])\*(?=\S)/g);
  const closers = outside.replace(/\*\*/g, "").match(/\S\*(?![*\w])/g);
  if ((singles?.length ?? 0) > (closers?.length ?? 0)) out = out.replace(/\s+$/, "") + "*";
  // A dangling link "[text](http://partial" → show the text only.
  out = out.replace(/\[([^\]]*)\]\([^)]*$/, "$1");
  out = out.replace(/\[([^\]]*)$/, "$1");
  return out;
}
