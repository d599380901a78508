// Syntax highlighting for diffs: lowlight (highlight.js grammars, no eval, no wasm) gives a hast
// tree, which is split into lines of tokens and rendered as React elements (never as HTML).
import { createLowlight } from "lowlight";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import type { ElementContent, Root } from "hast";

const lowlight = createLowlight({
  bash, c, cpp, css, go, ini, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml,
});

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

/** Above this a file is shown without highlighting (highlighting must never stall the page). */
const MAX_CHARS = 300_000;

/**
 * Highlight a whole file and split it into lines of tokens (index 0 is line 1).
 * Highlighting the whole file (not line by line) keeps multi-line strings and comments right.
 */
export function highlightLines(code: string, lang: string | null): Token[][] | null {
  if (!lang || code.length === 0 || code.length > MAX_CHARS) return null;
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
