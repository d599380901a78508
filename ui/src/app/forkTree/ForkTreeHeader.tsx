import { RefreshCw } from "lucide-react";
/** The fork tree's header: back, the title search, how many sessions (or matches), archived ones, refresh. */
export function ForkTreeHeader({
  query,
  onQuery,
  searching,
  matches,
  total,
  archived,
  onArchived,
  onRefresh,
  onBack,
}: {
  query: string;
  onQuery: (query: string) => void;
  searching: boolean;
  /** How many sessions match the search. */
  matches: number;
  total: number;
  archived: boolean;
  onArchived: (show: boolean) => void;
  onRefresh: () => void;
  onBack: () => void;
}) {
  return (
    <header className="conv-header ft-header">
      <button type="button" className="btn small" onClick={onBack} data-testid="fork-tree-back">
        ← Sessions
      </button>
      <h1 className="conv-title">Fork tree</h1>
      <input
        type="search"
        className="input ft-search"
        placeholder="Search by title"
        aria-label="Search sessions by title"
        data-testid="fork-tree-search"
        value={query}
        onChange={(e) => onQuery(e.target.value)}
      />
      <span className="muted small" data-testid="fork-tree-count" aria-live="polite">
        {searching ? `${matches} of ${total} match` : `${total} session${total === 1 ? "" : "s"}`}
      </span>
      <label className="small muted check">
        <input
          type="checkbox"
          checked={archived}
          onChange={(e) => onArchived(e.target.checked)}
          data-testid="fork-tree-archived"
        />
        Show archived
      </label>
      <button type="button" className="icon-btn" onClick={onRefresh} aria-label="Refresh the tree" title="Refresh the tree">
        <RefreshCw size={16} aria-hidden="true" />
      </button>
    </header>
  );
}

/** "Compare with…": which session the next pick is compared with, and Cancel. */
export function PickingBanner({ title, onCancel }: { title: string | null | undefined; onCancel: () => void }) {
  return (
    <div className="ft-picking" role="status" data-testid="fork-tree-picking">
      <span>
        Pick the session to compare with <strong>{title}</strong>: click it, or move to it and press Enter.
      </span>
      <button type="button" className="btn small" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
