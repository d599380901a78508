/**
 * Streaming-safe markdown helpers: split a growing text into blocks so finished
 * blocks can be memoised, and close constructs left open mid-stream.
 */

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/** Splits markdown into top-level blocks at blank lines outside code fences. */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  let blank = false;
  for (const line of text.split("\n")) {
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
    current.push(line);
  }
  if (current.length) blocks.push(current.join("\n"));
  return blocks;
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
