import { useId, useMemo, useState } from "react";
import fuzzysort from "fuzzysort";
import { Modal } from "./Modal";

/** One action the palette offers, with the key that does it directly (if any). */
export interface PaletteAction {
  id: string;
  label: string;
  shortcut?: string;
  run: () => void;
}

/** Ctrl/Cmd+K. */
export function isPaletteShortcut(e: KeyboardEvent): boolean {
  return (e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "k";
}

/**
 * The command palette: every action of the current view with its shortcut, filtered as you type
 * (fuzzy), ↑/↓ to move, Enter to run, Esc to close.
 */
export function CommandPalette({ actions, onClose }: { actions: PaletteAction[]; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const listId = useId();
  const shown = useMemo(
    () => (query.trim() ? fuzzysort.go(query, actions, { key: "label" }).map((r) => r.obj) : actions),
    [actions, query],
  );
  const at = Math.min(active, Math.max(shown.length - 1, 0));
  const run = (a: PaletteAction | undefined) => {
    if (!a) return;
    onClose();
    a.run();
  };
  return (
    <Modal title="Commands" onClose={onClose} testId="command-palette" className="palette">
      <input
        className="palette-input"
        data-testid="palette-input"
        role="combobox"
        aria-expanded="true"
        aria-controls={listId}
        aria-activedescendant={shown.length ? `${listId}-${at}` : undefined}
        aria-label="Search commands"
        placeholder="Type a command…"
        value={query}
        autoFocus
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            const n = shown.length || 1;
            setActive((at + (e.key === "ArrowDown" ? 1 : -1) + n) % n);
          } else if (e.key === "Enter") {
            e.preventDefault();
            run(shown[at]);
          }
        }}
      />
      <ul className="palette-list" role="listbox" id={listId} aria-label="Commands">
        {shown.map((a, i) => (
          <li
            key={a.id}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === at}
            className={i === at ? "active" : ""}
            data-testid="palette-item"
            data-action={a.id}
            onMouseDown={(e) => {
              e.preventDefault();
              run(a);
            }}
          >
            <span>{a.label}</span>
            {a.shortcut && <kbd className="palette-key">{a.shortcut}</kbd>}
          </li>
        ))}
        {shown.length === 0 && <li className="muted small">No command matches “{query}”.</li>}
      </ul>
    </Modal>
  );
}
