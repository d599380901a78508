import { GitBranchPlus } from "lucide-react";
import type { MenuItem } from "../MenuButton";
import { shortExcerpt, type FlatNode } from "../forkTreeModel";

/** The selected session under the tree: where it was forked from, and its actions as buttons. */
export function SelectionBar({
  f,
  parentTitle,
  actions,
  onOpenParent,
}: {
  f: FlatNode;
  parentTitle?: string;
  actions: MenuItem[];
  onOpenParent: () => void;
}) {
  const n = f.node;
  return (
    <footer className="ft-selbar" aria-label="Selected session" data-testid="fork-tree-selected">
      <div className="ft-sel-text">
        <strong>{n.title || n.slug}</strong>
        {f.parent ? (
          <span className="muted small">
            {" "}
            · forked from{" "}
            <button type="button" className="link-btn" onClick={onOpenParent} data-testid="fork-open-parent">
              {parentTitle ?? "its parent"}
            </button>{" "}
            at <q>{shortExcerpt(n.fork_excerpt, 80)}</q>
          </span>
        ) : (
          <span className="muted small"> · top-level{n.fork ? " (a promoted fork)" : ""}</span>
        )}
      </div>
      <div className="row ft-sel-actions">
        {actions.map((a) => (
          <button
            key={a.label}
            type="button"
            className={`btn small${a.testId === "fork-node-fork" ? " ft-fork-btn" : ""}`}
            disabled={!!a.disabled}
            title={a.disabled || undefined}
            data-testid={a.testId ? `sel-${a.testId}` : undefined}
            onClick={a.onSelect}
          >
            {a.testId === "fork-node-fork" && <GitBranchPlus size={14} aria-hidden="true" />}
            {a.label}
          </button>
        ))}
      </div>
      <span className="muted small ft-keys">Arrows move · Enter open · Space expand/collapse · +/− zoom · 0 fit · Shift+F10 actions</span>
    </footer>
  );
}
