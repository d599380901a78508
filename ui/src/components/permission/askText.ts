/**
 * Plain words for an ask shown at its tool card: paths relative to the project, the reason once
 * (the runtime's reason repeats the matched rule with its config file's absolute path), and the
 * rule's source named as a person would ("global config", "project config").
 */

/** `path` relative to `root` when it lies inside it; other paths as they are (a home prefix as `~`). */
export function relativePath(path: string, root: string | undefined, home?: string): string {
  const r = root?.replace(/[\\/]+$/, "");
  if (r && (path === r || path.startsWith(`${r}/`) || path.startsWith(`${r}\\`))) {
    return path.slice(r.length + 1) || ".";
  }
  const h = home?.replace(/[\\/]+$/, "");
  if (h && path.startsWith(`${h}/`)) return `~/${path.slice(h.length + 1)}`;
  return path;
}

/** Every absolute path under `root` in a text, made relative (targets of commands, URLs untouched). */
export function relativeIn(text: string, root: string | undefined): string {
  const r = root?.replace(/[\\/]+$/, "");
  if (!r) return text;
  return text.split(`${r}/`).join("");
}

/**
 * The reason without the matched rule repeated in it: `Needs confirmation to edit a.ts (matched
 * rule: ask edit from /abs/config.json)` → `Needs confirmation to edit a.ts`.
 */
export function reasonOnce(reason: string, root?: string): string {
  const cut = reason.replace(/\s*\((?:matched )?rule:[^)]*\)\s*$/i, "").trim();
  return relativeIn(cut, root);
}

/** Where a rule comes from, from the runtime's `RULE from SOURCE` text. */
export interface RuleText {
  rule: string;
  /** "global config", "project config", "built-in defaults", or the source as given. */
  source: string | null;
}

export function ruleText(matched: string | null | undefined, root?: string): RuleText | null {
  if (!matched) return null;
  const m = /^(.*?)\s+(?:from\s+(.+)|\((.+)\))$/.exec(matched);
  if (!m) return { rule: matched, source: null };
  const rule = m[1]!;
  const raw = (m[2] ?? m[3] ?? "").trim();
  return { rule, source: sourceName(raw, root) };
}

function sourceName(raw: string, root?: string): string {
  const r = root?.replace(/[\\/]+$/, "");
  if (raw.includes(".mia-code/") || (r && raw.startsWith(`${r}/`))) return "project config";
  if (/mia-code[\\/]config\.json/.test(raw)) return "global config";
  return raw;
}
