import type { PaletteAction } from "../CommandPalette";
import { modKey, PALETTE_SESSION_COMMANDS, runSessionCommand } from "../commands";
import { setTheme } from "../theme";
import { zoomStep } from "../zoom";

/** The window event the palette's "Hide or show the sidebar" sends (the shell toggles it). */
export const TOGGLE_SIDEBAR = "mia-toggle-sidebar";

/**
 * What the command palette offers: the window's actions, and with a session on screen the
 * session's (its `/` commands, Stop, the plan/build toggle), each with the key that does it.
 */
export function paletteActions(v: {
  project: boolean;
  waiting: number;
  newSession: () => void;
  settings: () => void;
  worktrees: () => void;
  compare: () => void;
  tree: () => void;
  queue: () => void;
  shortcuts: () => void;
  sidebar: () => void;
  /** Search the open session's transcript (null: no session open). */
  search: (() => void) | null;
  /** The session on screen (null: none). */
  session: { running: boolean } | null;
}): PaletteAction[] {
  const mod = modKey();
  const list: PaletteAction[] = [];
  if (v.session) {
    if (v.session.running) list.push({ id: "stop", label: "Stop the running turn", shortcut: "Esc", run: () => runSessionCommand({ kind: "stop" }) });
    list.push({ id: "mode", label: "Switch between plan and build", shortcut: "Tab", run: () => runSessionCommand({ kind: "mode" }) });
  }
  if (v.search) list.push({ id: "search", label: "Search in this session", shortcut: `${mod}+F`, run: v.search });
  if (v.session) {
    for (const c of PALETTE_SESSION_COMMANDS) {
      list.push({
        id: `cmd-${c.name}`,
        label: c.label,
        shortcut: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
        run: () => runSessionCommand({ kind: "command", name: c.name, args: c.args }),
      });
    }
  }
  if (v.project) {
    list.push({ id: "new-session", label: "New session", run: v.newSession });
    if (v.waiting > 0) list.push({ id: "attention", label: `Answer waiting asks (${v.waiting})`, shortcut: `${mod}+Shift+A`, run: v.queue });
    list.push({ id: "worktrees", label: "Worktrees", run: v.worktrees });
    list.push({ id: "compare", label: "Compare attempts", run: v.compare });
    list.push({ id: "fork-tree", label: "Fork tree", run: v.tree });
  }
  list.push({ id: "settings", label: "Settings", run: v.settings });
  list.push({ id: "shortcuts", label: "Keyboard shortcuts", shortcut: "?", run: v.shortcuts });
  list.push({ id: "sidebar", label: "Hide or show the sidebar", shortcut: `${mod}+B`, run: v.sidebar });
  list.push({ id: "zoom-in", label: "Zoom in", shortcut: `${mod}++`, run: () => zoomStep(1) });
  list.push({ id: "zoom-out", label: "Zoom out", shortcut: `${mod}+−`, run: () => zoomStep(-1) });
  list.push({ id: "zoom-reset", label: "Actual size", shortcut: `${mod}+0`, run: () => zoomStep(0) });
  list.push({ id: "theme-system", label: "Theme: follow the system", run: () => setTheme("system") });
  list.push({ id: "theme-light", label: "Theme: light", run: () => setTheme("light") });
  list.push({ id: "theme-dark", label: "Theme: dark", run: () => setTheme("dark") });
  return list;
}
