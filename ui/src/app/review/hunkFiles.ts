import type { DiffLine, FileDiff, Hunk, HunkView } from "../../protocol/generated";

/** A HunkView's lines (`+`, `-`, ` ` then the line; `\ No newline…`) as the diff view's hunk. */
export function toHunk(h: HunkView): Hunk {
  let oldNo = h.old_start;
  let newNo = h.new_start;
  const lines: DiffLine[] = [];
  for (const raw of h.lines) {
    const mark = raw[0];
    const content = raw.slice(1);
    if (mark === "\\") {
      const last = lines[lines.length - 1];
      if (last) last.noNewline = true;
    } else if (mark === "+") {
      lines.push({ type: "add", content, lineNumber: newNo, newLine: newNo });
      newNo++;
    } else if (mark === "-") {
      lines.push({ type: "delete", content, lineNumber: oldNo, oldLine: oldNo });
      oldNo++;
    } else {
      lines.push({ type: "context", content, lineNumber: newNo, oldLine: oldNo, newLine: newNo });
      oldNo++;
      newNo++;
    }
  }
  return { startBefore: h.old_start, linesBefore: h.old_lines, startAfter: h.new_start, linesAfter: h.new_lines, lines };
}

/** The files the hunks are in (in order of appearance), and which HunkView each file's hunk i is. */
export function hunksToFiles(hunks: HunkView[]): { files: FileDiff[]; hunkAt: (file: string, index: number) => HunkView | undefined } {
  const byFile = new Map<string, HunkView[]>();
  for (const h of hunks) byFile.set(h.file, [...(byFile.get(h.file) ?? []), h]);
  const files: FileDiff[] = [];
  for (const [file, list] of byFile) {
    const converted = list.map(toHunk);
    let additions = 0;
    let deletions = 0;
    for (const h of converted)
      for (const l of h.lines) {
        if (l.type === "add") additions++;
        else if (l.type === "delete") deletions++;
      }
    const first = list[0]!;
    const added = list.length === 1 && first.old_start === 0 && first.old_lines === 0;
    const deleted = list.length === 1 && first.new_start === 0 && first.new_lines === 0;
    files.push({
      file,
      status: added ? "added" : deleted ? "deleted" : "modified",
      before: "",
      after: "",
      additions,
      deletions,
      binary: list.some((h) => h.binary === true),
      hunks: converted,
    });
  }
  return { files, hunkAt: (file, index) => byFile.get(file)?.[index] };
}
