import { Fragment, useCallback, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";

/** Names listed inline up to this many; more fold into a count. */
const NAMES_INLINE = 4;

/**
 * A project's list that loads on open and again on Refresh (`refresh`). While a refresh runs the
 * last list stays (of this project only); `loading` says one is on its way.
 */
export function useProjectList<T>(what: string, directory: string, load: (directory: string) => Promise<T[]>) {
  const query = useQuery({
    queryKey: keys.projectList(what, directory),
    queryFn: async () => {
      const list = await load(directory);
      return Array.isArray(list) ? list : [];
    },
    // Read on open and on Refresh only (reading MCP servers starts them), never retried by itself.
    staleTime: 0,
    refetchOnWindowFocus: false,
    retry: false,
  });
  const { refetch } = query;
  const refresh = useCallback(() => void refetch(), [refetch]);
  // A failed refresh shows its error, not the list from before it.
  const failed = query.error && query.errorUpdatedAt >= query.dataUpdatedAt;
  return {
    loading: query.isFetching,
    list: failed ? null : (query.data ?? null),
    error: failed ? errorMessage(query.error) : null,
    refresh,
  };
}

/**
 * A Settings section over a project's list read by `useProjectList` (the MCP servers, the
 * plugins): its title, a line while it loads, the error, what to do when it is empty, the table,
 * and Refresh. Test ids are `${testId}-loading`, `-empty`, `-table` and `-refresh`.
 */
export function ProjectListSection<T>({
  what,
  directory,
  load,
  title,
  sectionTestId,
  testId,
  loadingText,
  empty,
  columns,
  rowKey,
  row,
}: {
  /** The list's name in the query cache. */
  what: string;
  directory: string;
  load: (directory: string) => Promise<T[]>;
  title: string;
  sectionTestId: string;
  testId: string;
  loadingText: string;
  empty: ReactNode;
  columns: string[];
  rowKey: (item: T) => string;
  /** An item's rows (its own, and a detail row when it has one). */
  row: (item: T) => ReactNode;
}) {
  const { loading, list, error, refresh } = useProjectList(what, directory, load);
  return (
    <section data-testid={sectionTestId} aria-busy={loading}>
      <h3>{title}</h3>
      {loading && (
        <p className="muted small" role="status" data-testid={`${testId}-loading`}>
          {loadingText}
        </p>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {list?.length === 0 && (
        <p className="muted small" data-testid={`${testId}-empty`}>
          {empty}
        </p>
      )}
      {list && list.length > 0 && (
        <div className="table-scroll" tabIndex={0} role="region" aria-label={title}>
          <table className="table" data-testid={`${testId}-table`}>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.map((item) => (
                <Fragment key={rowKey(item)}>{row(item)}</Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row-end">
        <button type="button" className="btn small" disabled={loading} onClick={refresh} data-testid={`${testId}-refresh`}>
          Refresh
        </button>
      </div>
    </section>
  );
}

/** An item's state as a task badge (`badges` maps a state to the badge's colour; others are "queued"). */
export function StateBadge({ state, badges, testId }: { state: string; badges: Record<string, string>; testId: string }) {
  return (
    <span className={`task-badge badge-${badges[state] ?? "queued"}`} data-testid={testId}>
      {state}
    </span>
  );
}

/** The class of an item's error line: an error when it broke, a warning when it is untrusted, muted otherwise. */
export function errorClass(broken: boolean, state: string): string {
  return broken ? "error-text small" : state === "untrusted" ? "warning small" : "muted small";
}

/** Names (tools, hooks) inline when few, folded into a count when many, "none" without. */
export function NameList({ names, what, testId }: { names: string[]; what: string; testId: string }) {
  return (
    <td className="small" data-testid={testId}>
      {names.length === 0 ? (
        <span className="muted">none</span>
      ) : names.length <= NAMES_INLINE ? (
        <span className="mono">{names.join(", ")}</span>
      ) : (
        <details>
          <summary>
            {names.length} {what}
          </summary>
          <span className="mono">{names.join(", ")}</span>
        </details>
      )}
    </td>
  );
}
