/**
 * The unifier's 🧠 Mia / 🌸 Miette lines, split out of streamed text the way the runtime does
 * when it stores the message (crates/mia-core/src/unifier.rs), so a draft looks like the
 * stored message will.
 */
export interface Note {
  perspective: "mia" | "miette";
  text: string;
}

const PERSPECTIVES: [string, "mia" | "miette"][] = [
  ["🧠", "mia"],
  ["🌸", "miette"],
];

export function commentaryLine(line: string): Note | null {
  const t = line.trimStart().replace(/^[->\s]+/, "");
  for (const [emoji, name] of PERSPECTIVES) {
    if (!t.startsWith(emoji)) continue;
    let rest = t.slice(emoji.length).trimStart().replace(/^\*+/, "");
    if (rest.slice(0, name.length).toLowerCase() !== name) continue;
    rest = rest.slice(name.length).replace(/^\*+/, "").trimStart();
    if (!rest.startsWith(":")) continue;
    const body = rest.slice(1).replace(/^\*+/, "").trim();
    return body ? { perspective: name, text: body } : null;
  }
  return null;
}

export function splitCommentary(text: string): { body: string; notes: Note[] } {
  if (!text.includes("🧠") && !text.includes("🌸")) return { body: text, notes: [] };
  const kept: string[] = [];
  const notes: Note[] = [];
  for (const line of text.split("\n")) {
    const note = commentaryLine(line);
    if (note) notes.push(note);
    else kept.push(line);
  }
  return notes.length ? { body: kept.join("\n"), notes } : { body: text, notes };
}
