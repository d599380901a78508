import type { FileChangeKind, PreviewFile, TimelineStep } from "../../protocol/generated";

/** Local wall-clock time of a millisecond timestamp, `HH:MM:SS`. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** What the entry is called: the tool for tool steps, "undo"/"redo" for history steps. */
export function stepLabel(step: TimelineStep): string {
  switch (step.kind) {
    case "revert":
      return "undo";
    case "redo":
      return "redo";
    default:
      return step.tool ?? "tool";
  }
}

export const KIND_BADGE: Record<FileChangeKind, string> = { added: "A", modified: "M", deleted: "D" };

const WAS: Record<PreviewFile["was"], string> = {
  added: "was created",
  modified: "was modified",
  deleted: "was deleted",
};

/** `restore src/a.ts (was modified)`, `remove src/new.ts (was created)`. */
export function previewLine(file: PreviewFile): string {
  return `${file.action} ${file.path} (${WAS[file.was]})`;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  return "something went wrong";
}
