/** Lines of a file to comment on: `line`..`endLine` (after-side numbers, 1-based, inclusive). */
export interface DiffLineTarget {
  file: string;
  line: number;
  endLine: number;
}

/** A comment shown under the last line it is on. */
export interface DiffComment extends DiffLineTarget {
  id: string;
  text: string;
  /** The lines changed since it was written. */
  outdated?: boolean;
}
