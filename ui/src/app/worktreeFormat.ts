import type { ScriptView } from "../protocol/generated";
import { formatDuration } from "../lib/format";

export const shortSha = (sha: string) => sha.slice(0, 7);

/** Whether a start or check script succeeded. */
export const scriptOk = (s: ScriptView) => !s.cancelled && s.exit_code === 0;

export function scriptStatus(s: ScriptView): string {
  if (s.cancelled) return `cancelled after ${formatDuration(s.duration_ms)}`;
  if (s.exit_code === null || s.exit_code === undefined) return `killed after ${formatDuration(s.duration_ms)}`;
  return `${s.exit_code === 0 ? "passed" : "failed"} (exit ${s.exit_code}) in ${formatDuration(s.duration_ms)}`;
}
