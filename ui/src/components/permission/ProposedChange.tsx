import { useState } from "react";
import type { FileDiff } from "../../protocol/generated";
import { FileSection, type DiffMode } from "../diff/FileSection";
import "../diff/DiffView.css";

/**
 * What a write or an edit would change, in the permission dialog: the diff against the file as it
 * is now (a new file: its content as additions), unified or side by side. It scrolls on its own so
 * the answer keys stay where they are.
 */
export function ProposedChange({ diff }: { diff: FileDiff }) {
  const [mode, setMode] = useState<DiffMode>("unified");
  const [expanded, setExpanded] = useState(true);
  return (
    <div className="mia-perm-proposed" data-testid="permission-proposed">
      <div className="mia-perm-proposed-bar">
        <span className="mia-perm-label">
          {diff.status === "added" ? "New file" : "Proposed change"}{" "}
          <span className="mia-diff-add-count">+{diff.additions ?? 0}</span>{" "}
          <span className="mia-diff-del-count">−{diff.deletions ?? 0}</span>
        </span>
        <button
          type="button"
          className="mia-perm-proposed-mode"
          data-testid="permission-proposed-mode"
          onClick={() => setMode((m) => (m === "unified" ? "split" : "unified"))}
        >
          {mode === "unified" ? "Side by side" : "Unified"}
        </button>
      </div>
      <div className="mia-perm-proposed-body">
        <FileSection file={diff} mode={mode} expanded={expanded} onToggle={() => setExpanded((x) => !x)} />
      </div>
    </div>
  );
}
