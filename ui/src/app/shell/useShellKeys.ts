import { useEffect, type Dispatch, type SetStateAction } from "react";
import { isAttentionShortcut } from "../Attention";
import { isPaletteShortcut } from "../CommandPalette";
import { TOGGLE_SIDEBAR } from "./paletteActions";

/**
 * The window's own keys: Ctrl/Cmd+Shift+A opens the attention queue (when asks wait elsewhere),
 * Ctrl/Cmd+B hides or shows the sidebar (the palette's action too), `?` outside a text field
 * shows the shortcuts, Ctrl/Cmd+K the command palette.
 */
export function useShellKeys({
  waiting,
  setQueueOpen,
  toggleSidebar,
  setShortcuts,
  setPalette,
}: {
  /** How many asks wait in other sessions. */
  waiting: number;
  setQueueOpen: (open: boolean) => void;
  toggleSidebar: () => void;
  setShortcuts: (open: boolean) => void;
  setPalette: Dispatch<SetStateAction<boolean>>;
}) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isAttentionShortcut(e) && waiting > 0) {
        e.preventDefault();
        setQueueOpen(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [waiting, setQueueOpen]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "b") {
        e.preventDefault();
        toggleSidebar();
      }
    };
    // The palette's "Hide or show the sidebar".
    const onToggle = () => toggleSidebar();
    window.addEventListener("keydown", onKey);
    window.addEventListener(TOGGLE_SIDEBAR, onToggle);
    return () => {
      window.removeEventListener("keydown", onKey);
      window.removeEventListener(TOGGLE_SIDEBAR, onToggle);
    };
  }, [toggleSidebar]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // An open permission ask keeps the keyboard.
      if (document.querySelector("[data-testid='permission-dialog']")) return;
      if (e.key === "?" && !e.ctrlKey && !e.metaKey && !e.altKey) {
        const t = e.target as HTMLElement | null;
        const typing = t?.closest?.("input, textarea, select, [contenteditable='true']");
        if (typing || document.querySelector("[role='dialog']")) return;
        e.preventDefault();
        setShortcuts(true);
        return;
      }
      if (!isPaletteShortcut(e)) return;
      e.preventDefault();
      setPalette((p) => !p);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [setPalette, setShortcuts]);
}
