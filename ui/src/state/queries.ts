import { QueryClient, type QueryKey } from "@tanstack/react-query";
import type { Event } from "../protocol/generated";
import { eventSession } from "../transport/multiplex";
import type { Transport } from "../transport/types";

/**
 * Server state the UI fetches (the session list, agents, a session's steps and cost) is cached
 * by TanStack Query under these keys and made stale by the runtime's Events ({@link staleFor}),
 * not fetched again by hand. A refetch started while another is in flight replaces it, so an
 * older answer never overwrites a newer one.
 */
export const keys = {
  /** Every list of a project (archived or not). */
  sessionsOf: (project: string) => ["sessions", project] as const,
  sessions: (project: string, archived: boolean) => ["sessions", project, archived] as const,
  agents: (directory: string) => ["agents", directory] as const,
  /** A project's custom slash commands (the composer's / menu lists them after the built-ins). */
  commands: (directory: string) => ["commands", directory] as const,
  timeline: (session: string) => ["timeline", session] as const,
  cost: (session: string) => ["cost", session] as const,
  /** Settings (of a project, or the global ones: ""). */
  settings: (directory: string) => ["settings", directory] as const,
  permissions: (directory: string, agent: string) => ["permissions", directory, agent] as const,
  approvals: (directory: string) => ["approvals", directory] as const,
  /** A project's MCP servers or plugins (`what`), read on open and on Refresh. */
  projectList: (what: string, directory: string) => ["project-list", what, directory] as const,
  shares: () => ["shares"] as const,
  /** Every diff of a session. */
  diffsOf: (session: string) => ["diff", session] as const,
  /** A session's diff: the whole session, a message's or a step's changes. */
  diff: (session: string, scope: unknown) => ["diff", session, scope] as const,
  worktrees: (directory: string) => ["worktrees", directory] as const,
  /** A session's review comments. */
  review: (session: string) => ["review", session] as const,
  /** A checkout's git state: its status, hunks and pull request (under it). */
  git: (directory: string) => ["git", directory] as const,
  /** A workspace's trust and whether the project's hooks run (the session view's trust prompt). */
  trust: (directory: string) => ["trust", directory] as const,
  /** Under `worktrees(directory)`: invalidating the list reads the trash again too. */
  worktreeTrash: (directory: string) => ["worktrees", directory, "trash"] as const,
};

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Events say when something changed; a focused window checks again (another process).
        staleTime: 30_000,
        refetchOnWindowFocus: true,
        retry: 1,
      },
    },
  });
}

/** What an Event makes stale. */
export function staleFor(e: Event): QueryKey[] {
  switch (e.type) {
    case "session_updated":
      // Any project's lists: the session may have moved in or out of one.
      return [["sessions"]];
    case "turn_finished":
      // (a worktree's status: what its session's turn changed)
      // (and the git state of every checkout: hunks, status; the review's comments)
      return [
        ["sessions"],
        keys.timeline(e.session_id),
        keys.cost(e.session_id),
        keys.diffsOf(e.session_id),
        ["worktrees"],
        ["git"],
        keys.review(e.session_id),
        // (a command file the turn wrote)
        ["commands"],
        // (a hook the turn added to the project's config: the trust prompt asks again)
        ["trust"],
      ];
    case "snapshot":
      // Files changed (a step's snapshot): the session's diffs too.
      return [keys.timeline(e.session_id), keys.diffsOf(e.session_id)];
    case "message_stored": {
      const session = eventSession(e);
      return session ? [keys.timeline(session)] : [];
    }
    case "subagent_finished":
      return [keys.timeline(e.session_id), keys.cost(e.session_id)];
    case "compaction_finished":
      return [["sessions"], keys.timeline(e.session_id)];
    case "notice":
      // A session's notice may say its project's hooks do not run (untrusted, or changed since
      // they were approved): the trust views are read again (they, not the text, say how it stands).
      return e.session_id ? [["trust"]] : [];
    case "permission_resolved":
      // "Always for this project" adds an approval.
      return [["approvals"]];
    default:
      return [];
  }
}

/**
 * Makes queries stale as the window's stream says (one listener), and all of them when the
 * stream could not be resumed (a restart, a gap).
 */
export function invalidateOnEvents(client: QueryClient, transport: Transport, coalesceMs = STALE_COALESCE_MS): () => void {
  let opened = false;
  // What a burst of Events made stale, refetched once when the burst is over: the start of a turn
  // brings several `session_updated` and `message_stored` in a few milliseconds, and each used to
  // refetch the session list (and render the window again) while the new session's view mounted.
  const stale = new Map<string, QueryKey>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const keys = [...stale.values()];
    stale.clear();
    for (const queryKey of keys) void client.invalidateQueries({ queryKey });
  };
  const stop = transport.subscribe(
    null,
    (e) => {
      for (const queryKey of staleFor(e)) {
        stale.set(JSON.stringify(queryKey), queryKey);
        // A fetch already on its way answers what was true before this Event: dropped now, so
        // it cannot land while the burst is gathered (the refetch after it has the newer state).
        if (client.isFetching({ queryKey }) > 0) void client.cancelQueries({ queryKey });
      }
      if (stale.size && timer === null) timer = setTimeout(flush, coalesceMs);
    },
    (s) => {
      // The first "open" is the start (what is cached was just fetched); a later one is a
      // stream that could not be resumed (a restart), like "lagged".
      if (s === "lagged" || (s === "open" && opened)) void client.invalidateQueries();
      if (s === "open") opened = true;
    },
  );
  return () => {
    if (timer !== null) clearTimeout(timer);
    stop();
  };
}

/** How long the Events of a burst are gathered before what they made stale is refetched. */
export const STALE_COALESCE_MS = 100;
