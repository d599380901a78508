import type { DiffLine, DiffStatus, FileDiff, Hunk } from "../protocol/generated";

/**
 * Parses `git diff` output (unified diff text) into the FileDiff structures the
 * diff component renders. Full before/after contents are not in a patch, so
 * they are left empty (the component only needs the hunks).
 */
export function parseUnifiedDiff(text: string): FileDiff[] {
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const files: FileDiff[] = [];
  const cur: { file: FileDiff | null; paths: { git?: string; old?: string | null; new?: string | null } } = {
    file: null,
    paths: {},
  };

  const finish = () => {
    const f = cur.file;
    if (!f) return;
    f.file = cur.paths.new ?? cur.paths.old ?? cur.paths.git ?? f.file;
    files.push(f);
    cur.file = null;
    cur.paths = {};
  };
  const start = (gitLine?: string): FileDiff => {
    finish();
    const f: FileDiff = { file: "", status: "modified", before: "", after: "", additions: 0, deletions: 0, hunks: [] };
    cur.file = f;
    if (gitLine) cur.paths.git = pathFromGitHeader(gitLine);
    return f;
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.startsWith("diff --git ")) {
      start(line);
      i++;
      continue;
    }
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      // The ---/+++ pair of a `diff --git` entry, or the start of a file in a plain patch.
      const f = !cur.file || cur.file.hunks.length > 0 || cur.paths.old !== undefined ? start() : cur.file;
      cur.paths.old = sidePath(line.slice(4));
      cur.paths.new = sidePath(lines[i + 1]!.slice(4));
      if (cur.paths.old === null) f.status = "added";
      else if (cur.paths.new === null) f.status = "deleted";
      i += 2;
      continue;
    }
    const f = cur.file;
    if (f && line.startsWith("@@")) {
      const h = parseHunkHeader(line);
      if (!h) {
        i++;
        continue;
      }
      i = readHunk(lines, i + 1, h, f);
      f.hunks.push(h);
      continue;
    }
    if (f) {
      if (line.startsWith("new file mode ")) {
        f.status = "added";
        f.newMode = line.slice(14).trim();
      } else if (line.startsWith("deleted file mode ")) {
        f.status = "deleted";
        f.oldMode = line.slice(18).trim();
      } else if (line.startsWith("old mode ")) f.oldMode = line.slice(9).trim();
      else if (line.startsWith("new mode ")) f.newMode = line.slice(9).trim();
      else if (line.startsWith("index ")) {
        const m = /^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d+))?/.exec(line);
        if (m) {
          f.oldId = m[1];
          f.newId = m[2];
          if (m[3] && !f.oldMode && !f.newMode) {
            f.oldMode = m[3];
            f.newMode = m[3];
          }
        }
      } else if (line.startsWith("rename to ")) cur.paths.new = unquote(line.slice(10));
      else if (line.startsWith("rename from ")) cur.paths.old = unquote(line.slice(12));
      else if (line.startsWith("Binary files ") || line === "GIT binary patch") f.binary = true;
    }
    i++;
  }
  finish();
  return files;
}

/** `@@ -a[,b] +c[,d] @@ …` → an empty hunk with its ranges. */
function parseHunkHeader(line: string): Hunk | null {
  const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
  if (!m) return null;
  return {
    startBefore: Number(m[1]),
    linesBefore: m[2] === undefined ? 1 : Number(m[2]),
    startAfter: Number(m[3]),
    linesAfter: m[4] === undefined ? 1 : Number(m[4]),
    lines: [],
  };
}

/** Reads a hunk's lines (bounded by its counts, so content that looks like a header is safe). */
function readHunk(lines: string[], from: number, h: Hunk, f: FileDiff): number {
  let oldLeft = h.linesBefore;
  let newLeft = h.linesAfter;
  let oldNo = h.startBefore;
  let newNo = h.startAfter;
  // git's start is the line before the hunk when that side is empty.
  if (h.linesBefore === 0) oldNo = h.startBefore + 1;
  if (h.linesAfter === 0) newNo = h.startAfter + 1;
  let i = from;
  const push = (l: DiffLine) => h.lines.push(l);
  while (i < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i]!.startsWith("\\"))) {
    const line = lines[i]!;
    const mark = line[0];
    const content = line.slice(1);
    if (mark === "\\") {
      const last = h.lines[h.lines.length - 1];
      if (last) last.noNewline = true;
    } else if (mark === "+" && newLeft > 0) {
      push({ type: "add", content, lineNumber: newNo, newLine: newNo });
      newNo++;
      newLeft--;
      f.additions++;
    } else if (mark === "-" && oldLeft > 0) {
      push({ type: "delete", content, lineNumber: oldNo, oldLine: oldNo });
      oldNo++;
      oldLeft--;
      f.deletions++;
    } else if ((mark === " " || line === "") && oldLeft > 0 && newLeft > 0) {
      push({ type: "context", content: line === "" ? "" : content, lineNumber: newNo, oldLine: oldNo, newLine: newNo });
      oldNo++;
      newNo++;
      oldLeft--;
      newLeft--;
    } else break; // a malformed hunk: stop at what does not fit it
    i++;
  }
  return i;
}

/** `a/path` / `b/path` / `/dev/null` (possibly quoted) → the path, or null for /dev/null. */
function sidePath(raw: string): string | null {
  const p = unquote(raw.replace(/\t.*$/, ""));
  if (p === "/dev/null") return null;
  return p.replace(/^[ab]\//, "");
}

/** The b-side path of `diff --git a/x b/x` (a fallback when there are no ---/+++ lines, e.g. binary). */
function pathFromGitHeader(line: string): string | undefined {
  const rest = line.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    const second = rest.indexOf(' "b/');
    if (second > 0) return unquote(rest.slice(second + 1)).replace(/^b\//, "");
  }
  // Unquoted: both halves are the same length when the path did not change.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    const a = rest.slice(0, half);
    const b = rest.slice(half + 1);
    if (a.startsWith("a/") && b.startsWith("b/") && a.slice(2) === b.slice(2)) return b.slice(2);
  }
  const m = / b\/(.*)$/.exec(rest);
  return m ? m[1] : undefined;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", a: "\x07", b: "\b", f: "\f", v: "\v" };

/** Git's C-style quoted path (`"sp\303\244ce"`) → the UTF-8 string. */
export function unquote(s: string): string {
  if (!(s.length >= 2 && s.startsWith('"') && s.endsWith('"'))) return s;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  const enc = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...enc.encode(c));
      continue;
    }
    const n = body[i + 1] ?? "";
    if (/[0-7]/.test(n)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      bytes.push(parseInt(oct, 8));
      i += oct.length;
    } else {
      bytes.push(...enc.encode(ESCAPES[n] ?? n));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The statuses a FileDiff can have, from an attempt file's status (`type_changed` shows as modified). */
export function diffStatus(status: string): DiffStatus {
  return status === "added" || status === "deleted" ? status : "modified";
}
