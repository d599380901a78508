import type { Redaction, RedactionPlace, SharedMessage } from "../protocol/generated";

/** A run of displayed text; `mark` is the redaction that put it there. */
export interface Segment {
  text: string;
  mark?: Redaction;
}

export function samePlace(a: RedactionPlace, b: RedactionPlace): boolean {
  if (a.in === "title" || b.in === "title") return a.in === b.in;
  if (a.in === "message" && b.in === "message") return a.message_id === b.message_id && a.part === b.part;
  if (a.in === "diff" && b.in === "diff") return a.file === b.file;
  return false;
}

/** The redactions made in one place of the payload. */
export function redactionsAt(redactions: readonly Redaction[], place: RedactionPlace): Redaction[] {
  return redactions.filter((r) => samePlace(r.place, place));
}

const WORD = /[A-Za-z0-9_.-]/;

/**
 * `text` cut into runs, the replacements the redactions of its place left in
 * it marked. Every `[REDACTED:…]` is marked; a shorter stand-in (`~` for the
 * home directory) only as often as it was made, where a path goes on
 * (`~/x`, `~` at the end), so a `~` someone wrote stays plain.
 */
export function markRedactions(text: string, redactions: readonly Redaction[]): Segment[] {
  const byReplacement = new Map<string, Redaction[]>();
  for (const r of redactions) {
    if (!r.replacement) continue;
    const list = byReplacement.get(r.replacement) ?? [];
    list.push(r);
    byReplacement.set(r.replacement, list);
  }
  const ranges: { start: number; end: number; mark: Redaction }[] = [];
  for (const [rep, list] of byReplacement) {
    const found: number[] = [];
    for (let i = text.indexOf(rep); i >= 0; i = text.indexOf(rep, i + rep.length)) found.push(i);
    let chosen = found;
    if (!rep.startsWith("[REDACTED") && found.length > list.length) {
      const pathLike = found.filter((i) => !WORD.test(text.charAt(i + rep.length)));
      chosen = (pathLike.length >= list.length ? pathLike : found).slice(0, list.length);
    }
    chosen.forEach((start, k) => ranges.push({ start, end: start + rep.length, mark: list[Math.min(k, list.length - 1)]! }));
  }
  ranges.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Segment[] = [];
  let at = 0;
  for (const r of ranges) {
    if (r.start < at) continue; // overlaps one already marked
    if (r.start > at) out.push({ text: text.slice(at, r.start) });
    out.push({ text: text.slice(r.start, r.end), mark: r.mark });
    at = r.end;
  }
  if (at < text.length || out.length === 0) out.push({ text: text.slice(at) });
  return out;
}

export const HOME_PATH = "home-path";

/** Secrets redacted (every kind but the home directory) and home paths replaced. */
export function redactionCounts(redactions: readonly Redaction[]): { secrets: number; home: number } {
  const home = redactions.filter((r) => r.kind === HOME_PATH).length;
  return { secrets: redactions.length - home, home };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "2 secrets redacted", "· home path replaced 3 times" (none: left out). */
export function redactionSummary(redactions: readonly Redaction[]): string {
  const { secrets, home } = redactionCounts(redactions);
  const first = `${plural(secrets, "secret", "secrets")} redacted`;
  return home ? `${first} · home path replaced ${plural(home, "time", "times")}` : first;
}

/** Where a redaction was made, for the list: "the title", "message 2 (assistant), part 1", "the diff of src/a.ts". */
export function placeLabel(place: RedactionPlace, messages: readonly SharedMessage[]): string {
  switch (place.in) {
    case "title":
      return "the title";
    case "message": {
      const i = messages.findIndex((m) => m.id === place.message_id);
      const m = messages[i];
      return m ? `message ${i + 1} (${m.role}), part ${place.part + 1}` : `message ${place.message_id}`;
    }
    case "diff":
      return `the diff of ${place.file}`;
  }
}

/** The text a part shows (a tool call's arguments as indented JSON). */
export function argsText(args: unknown): string {
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args, null, 2) ?? String(args);
  } catch {
    return String(args);
  }
}

/** Only web links are opened (the URL comes from the share server). */
export function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
