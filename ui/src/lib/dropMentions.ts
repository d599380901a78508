/**
 * Files dropped or pasted into the composer, as `@` mentions of project
 * files. A file that comes with its path (the desktop app) is mentioned by
 * its path relative to the project when it is inside it; one that comes with
 * its name only (a browser) is matched by name against the project's files.
 */
export interface Dropped {
  name: string;
  /** Absolute path, when the platform gives one. */
  path?: string;
}

export interface DropResult {
  /** Project-relative paths to mention. */
  mentions: string[];
  /** Why the others were not mentioned. */
  skipped: string[];
}

function norm(p: string): string {
  return p.replace(/\\/g, "/").replace(/\/+$/, "");
}

export function dropMentions(dropped: Dropped[], projectFiles: string[], root: string | null): DropResult {
  const mentions: string[] = [];
  const skipped: string[] = [];
  const base = root ? `${norm(root)}/` : null;
  for (const f of dropped) {
    if (f.path) {
      const p = norm(f.path);
      if (base && p.startsWith(base)) {
        mentions.push(p.slice(base.length));
      } else {
        skipped.push(`${f.name} is outside the project`);
      }
      continue;
    }
    const candidates = projectFiles.filter((p) => p === f.name || p.endsWith(`/${f.name}`));
    if (candidates.length === 1) mentions.push(candidates[0]!);
    else if (candidates.length === 0) skipped.push(`${f.name} is not a file of the project`);
    else skipped.push(`${f.name} matches ${candidates.length} files (${candidates.slice(0, 3).join(", ")}${candidates.length > 3 ? ", …" : ""}): type @ to pick one`);
  }
  return { mentions: [...new Set(mentions)], skipped };
}

/** The text to insert for `mentions`, as the @ popup writes them: `@a.ts @src/b.ts `. */
export function mentionText(mentions: string[]): string {
  return mentions.map((m) => `@${m}`).join(" ") + (mentions.length ? " " : "");
}
