import { useCallback, useEffect, useRef, useState } from "react";
import type { Event } from "../protocol/generated";
import { useServices } from "./context";

export interface LogLine {
  /** The worktree (or `main` for a check of the main tree). */
  name: string;
  command: string;
  line: string;
  stderr: boolean;
}

const MAX_LINES = 2000;

const trimSlash = (p: string) => p.replace(/[\\/]+$/, "");

/** Whether an event's repository root is this project (the project may be a folder inside it). */
export function sameRepo(eventDir: string, project: string): boolean {
  const a = trimSlash(eventDir);
  const b = trimSlash(project);
  return a === b || b.startsWith(`${a}/`);
}

/**
 * Start-script and check output (`worktree_log` events) of this project's
 * worktrees, collected from `start()` on (the event stream is opened when the
 * view mounts, so no line is missed). `only` keeps the lines of the named
 * worktrees; `narrow` sets it once a request has answered with the name (the
 * stream may deliver its last lines after the answer, so collecting goes on).
 */
export function useWorktreeLog(directory: string) {
  const { transport } = useServices();
  const [lines, setLines] = useState<LogLine[]>([]);
  const filter = useRef<{ only: Set<string> | null } | null>(null);

  useEffect(() => {
    const onEvent = (e: Event) => {
      if (e.type !== "worktree_log" || !filter.current || !sameRepo(e.directory, directory)) return;
      const only = filter.current.only;
      if (only && !only.has(e.name)) return;
      const l: LogLine = { name: e.name, command: e.command, line: e.line, stderr: e.stderr };
      setLines((ls) => (ls.length >= MAX_LINES ? [...ls.slice(-MAX_LINES + 1), l] : [...ls, l]));
    };
    return transport.subscribe(null, onEvent);
  }, [transport, directory]);

  const start = useCallback((only?: string[]) => {
    filter.current = { only: only && only.length ? new Set(only) : null };
    setLines([]);
  }, []);
  const narrow = useCallback((only: string[]) => {
    if (filter.current) filter.current = { only: new Set(only) };
  }, []);
  const stop = useCallback(() => {
    filter.current = null;
  }, []);
  return { lines, start, narrow, stop };
}
