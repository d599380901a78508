// The app's one highlighter: code in chat (app/MarkdownImpl.tsx) and in diffs
// (components/diff/highlight.ts) go through this lowlight instance (highlight.js grammars, no
// eval, no wasm), coloured by one set of token rules (styles/app.css). Loaded on demand (dynamic
// import, and the diff view is lazy) so the first paint does not pay for the grammars.
import { createLowlight } from "lowlight";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import ini from "highlight.js/lib/languages/ini";
import sql from "highlight.js/lib/languages/sql";
import type { Root } from "hast";

export const lowlight = createLowlight({
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  typescript,
  xml,
  yaml,
  ini,
  sql,
});
lowlight.registerAlias({
  bash: ["sh", "shell", "zsh", "console"],
  javascript: ["js", "jsx", "mjs"],
  typescript: ["ts", "tsx"],
  python: ["py"],
  rust: ["rs"],
  xml: ["html", "svg"],
  yaml: ["yml"],
  ini: ["toml"],
  cpp: ["c++", "cc", "hpp"],
});

/** Highlighted hast for code in a known language, or null (rendered plain). */
export function highlight(code: string, lang: string): Root | null {
  if (!lang || !lowlight.registered(lang) || code.length > 200_000) return null;
  return lowlight.highlight(lang, code);
}
