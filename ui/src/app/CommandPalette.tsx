import { useMemo, useRef, useState } from "react";
import { useOverflows } from "./useOverflows";
import fuzzysort from "fuzzysort";
import { Autocomplete, Input, Keyboard, Menu, MenuItem, TextField } from "react-aria-components";
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
 * (fuzzy, best match first), ↑/↓ to move, Enter to run, Esc to close. On react-aria-components'
 * Autocomplete: the field keeps the focus while the arrows move a virtual focus through the menu
 * (the WAI-ARIA combobox pattern, announced as such).
 */
export function CommandPalette({ actions, onClose }: { actions: PaletteAction[]; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const scrollRef = useRef<HTMLDivElement>(null);
  const scrolls = useOverflows(scrollRef);
  // Filtered here (fuzzysort ranks), not by the Autocomplete (which would only keep or drop).
  const shown = useMemo(
    () => (query.trim() ? fuzzysort.go(query, actions, { key: "label" }).map((r) => r.obj) : actions),
    [actions, query],
  );
  const run = (id: string) => {
    const a = actions.find((x) => x.id === id);
    if (!a) return;
    onClose();
    a.run();
  };
  return (
    <Modal title="Commands" onClose={onClose} testId="command-palette" className="palette">
      <Autocomplete inputValue={query} onInputChange={setQuery}>
        <TextField aria-label="Search commands" className="palette-field">
          <Input className="palette-input" data-testid="palette-input" placeholder="Type a command…" autoFocus />
        </TextField>
        {/* The list scrolls (the field keeps the focus); while it does, Tab reaches it too, to scroll without a mouse. */}
        <div className="palette-scroll" ref={scrollRef} role="region" aria-label="Commands list" tabIndex={scrolls ? 0 : undefined}>
          <Menu
            className="palette-list"
            aria-label="Commands"
            items={shown}
            onAction={(key) => run(String(key))}
            renderEmptyState={() => <div className="muted small palette-empty">No command matches “{query}”.</div>}
          >
            {(a) => (
              <MenuItem id={a.id} textValue={a.label} className="palette-item" data-testid="palette-item" data-action={a.id}>
                <span>{a.label}</span>
                {a.shortcut && <Keyboard className="palette-key">{a.shortcut}</Keyboard>}
              </MenuItem>
            )}
          </Menu>
        </div>
      </Autocomplete>
    </Modal>
  );
}
