import type { FileChangeKind, HistoryAction, PreviewFile, RevertSummary, TimelineStep } from "../../protocol/generated";

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

/** What each history action is called, the same words as the transcript's checkpoints. */
export const ACTION_TITLES: Record<HistoryAction["action"], string> = {
  undo: "Undo",
  revert: "Restore to here",
  redo: "Redo",
};

const DONE: Record<HistoryAction["action"], string> = { undo: "Undone", revert: "Restored", redo: "Redone" };

function list(paths: string[]): string {
  if (paths.length <= 3) return paths.join(", ");
  return `${paths.slice(0, 3).join(", ")} and ${paths.length - 3} more`;
}

/** An applied action's result in plain words: which files came back, which were removed (no hashes, no ids). */
export function resultText(action: HistoryAction["action"], s: Pick<RevertSummary, "restored" | "removed">): string {
  const parts: string[] = [];
  if (s.restored.length) parts.push(`restored ${list(s.restored)}`);
  if (s.removed.length) parts.push(`removed ${list(s.removed)}`);
  return parts.length ? `${DONE[action]}: ${parts.join("; ")}.` : `${DONE[action]}: no file needed to change.`;
}
