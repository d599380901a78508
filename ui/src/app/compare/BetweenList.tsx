import type { ReactNode } from "react";
import { ListBox, ListBoxItem } from "react-aria-components";
import type { BetweenView } from "../../protocol/generated";
import { ArrowLeft } from "lucide-react";

export const BETWEEN_LABEL: Record<string, string> = {
  same: "same in both",
  only_a: "only in A",
  only_b: "only in B",
  differ: "both differ",
};

export function CompareHeader({
  onBack,
  backLabel,
  children,
}: {
  onBack: () => void;
  backLabel?: string;
  children?: ReactNode;
}) {
  return (
    <header className="conv-header cmp-header">
      <button type="button" className="btn small" onClick={onBack} data-testid="compare-back">
        <ArrowLeft size={14} aria-hidden />
        {backLabel ?? "Worktrees"}
      </button>
      <h1>Compare attempts</h1>
      <div className="row cmp-pickers">{children}</div>
    </header>
  );
}

export function BetweenList({
  rows,
  selected,
  onSelect,
}: {
  rows: BetweenView[];
  selected: string | null;
  onSelect: (path: string) => void;
}) {
  if (!rows.length) return null;
  return (
    <ListBox
      className="cmp-between"
      aria-label="Files changed in either attempt"
      data-testid="between"
      items={rows.map((r) => ({ ...r, id: r.path }))}
      selectionMode="single"
      selectionBehavior="replace"
      disallowEmptySelection
      selectedKeys={selected === null ? [] : [selected]}
      onSelectionChange={(keys) => {
        if (keys === "all") return;
        const [path] = [...keys];
        if (path !== undefined) onSelect(String(path));
      }}
    >
      {(r) => (
        <ListBoxItem
          id={r.path}
          textValue={r.path}
          className="cmp-between-row"
          data-testid="between-row"
          data-path={r.path}
          data-status={r.status}
        >
          <span className="mono cmp-path">{r.path}</span>
          <span className={`chip cmp-status cmp-status-${r.status}`}>{BETWEEN_LABEL[r.status] ?? r.status}</span>
        </ListBoxItem>
      )}
    </ListBox>
  );
}

