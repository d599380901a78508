// Syntax highlighting for diffs: the app's one lowlight instance (lib/highlight.ts) gives a hast
// tree, which is split into lines of tokens and rendered as React elements (never as HTML).
import { lowlight } from "../../lib/highlight";
import type { ElementContent, Root } from "hast";
import type { FileDiff } from "../../protocol/generated";
import type { NumberedLine } from "./model";

const BY_EXTENSION: Record<string, string> = {
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript",
  js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
  json: "json", jsonc: "json",
  css: "css", scss: "css",
  html: "xml", htm: "xml", xml: "xml", svg: "xml", vue: "xml",
  rs: "rust", py: "python", go: "go", java: "java",
  c: "c", h: "c", cc: "cpp", cpp: "cpp", cxx: "cpp", hpp: "cpp",
  sh: "bash", bash: "bash", zsh: "bash",
  md: "markdown", markdown: "markdown",
  yml: "yaml", yaml: "yaml",
  toml: "ini", ini: "ini", cfg: "ini",
  sql: "sql",
};

const BY_NAME: Record<string, string> = { Dockerfile: "bash", Makefile: "bash", ".bashrc": "bash", ".zshrc": "bash" };

/** The highlight.js language for a path, from its extension; null when unknown. */
export function languageFor(path: string): string | null {
  const name = path.split("/").pop() ?? path;
  if (BY_NAME[name]) return BY_NAME[name];
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null;
}

export interface Token {
  text: string;
  /** highlight.js classes (`hljs-keyword ...`), absent for plain text. */
  cls?: string;
}

/** Highlight a block of code and split it into lines of tokens. */
export function highlightBlock(code: string, lang: string): Token[][] | null {
  let tree: Root;
  try {
    tree = lowlight.highlight(lang, code);
  } catch {
    return null;
  }
  const lines: Token[][] = [[]];
  const push = (text: string, cls: string | undefined) => {
    const parts = text.split("\n");
    parts.forEach((part, i) => {
      if (i > 0) lines.push([]);
      if (part) lines[lines.length - 1]!.push(cls ? { text: part, cls } : { text: part });
    });
  };
  const walk = (nodes: ElementContent[], cls: string | undefined) => {
    for (const node of nodes) {
      if (node.type === "text") push(node.value, cls);
      else if (node.type === "element") {
        const own = node.properties.className;
        const names = Array.isArray(own) ? own.join(" ") : typeof own === "string" ? own : "";
        walk(node.children, [cls, names].filter(Boolean).join(" ") || undefined);
      }
    }
  };
  walk(tree.children as ElementContent[], undefined);
  return lines;
}

/** Lines per highlighted block: enough context for most strings and comments, cheap to compute. */
const CHUNK = 120;
/** Longer lines (minified code) are shown plain. */
const MAX_LINE = 2000;

/**
 * Lazily highlights a file's hunks, one side of one hunk in blocks of CHUNK lines, so the cost
 * follows what is on screen (a virtualised 5,000-line file only highlights the visible blocks).
 */
export class HunkHighlighter {
  private readonly sides: { old: string[]; new: string[] }[];
  private readonly cache = new Map<string, Token[][] | null>();

  constructor(
    file: FileDiff,
    private readonly lang: string | null,
  ) {
    this.sides = file.hunks.map((h) => {
      const side = { old: [] as string[], new: [] as string[] };
      for (const l of h.lines) {
        if (l.type !== "add") side.old.push(l.content);
        if (l.type !== "delete") side.new.push(l.content);
      }
      return side;
    });
  }

  /** Tokens of a line (from the before-side for deletions, the after-side otherwise). */
  tokens(line: NumberedLine): Token[] | undefined {
    if (!this.lang || line.content.length > MAX_LINE) return undefined;
    const side = line.type === "delete" ? "old" : "new";
    const idx = side === "old" ? line.oldIdx : line.newIdx;
    if (idx === null) return undefined;
    const chunk = Math.floor(idx / CHUNK);
    const key = `${line.hunk}:${side}:${chunk}`;
    let block = this.cache.get(key);
    if (block === undefined) {
      const source = this.sides[line.hunk]?.[side].slice(chunk * CHUNK, (chunk + 1) * CHUNK) ?? [];
      block = source.some((s) => s.length > MAX_LINE) ? null : highlightBlock(source.join("\n"), this.lang);
      this.cache.set(key, block);
    }
    return block?.[idx - chunk * CHUNK];
  }
}
