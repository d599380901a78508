/** Ctrl/Cmd + / − / 0: the whole window's zoom, remembered across sessions. */
const KEY = "mia-code.zoom";
export const ZOOM_STEPS = [0.67, 0.75, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2] as const;

function read(): number {
  try {
    const v = Number(localStorage.getItem(KEY));
    return ZOOM_STEPS.includes(v as (typeof ZOOM_STEPS)[number]) ? v : 1;
  } catch {
    return 1;
  }
}

export function applyZoom(level: number): void {
  document.documentElement.style.setProperty("zoom", String(level));
  document.documentElement.dataset.zoom = String(level);
  try {
    if (level === 1) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, String(level));
  } catch {
    /* no storage */
  }
}

/** The zoom a key press asks for, or null when it is not a zoom key. */
export function zoomFor(e: KeyboardEvent, current: number): number | null {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return null;
  const i = ZOOM_STEPS.indexOf(current as (typeof ZOOM_STEPS)[number]);
  const at = i < 0 ? ZOOM_STEPS.indexOf(1) : i;
  if (e.key === "=" || e.key === "+") return ZOOM_STEPS[Math.min(at + 1, ZOOM_STEPS.length - 1)]!;
  if (e.key === "-" || e.key === "_") return ZOOM_STEPS[Math.max(at - 1, 0)]!;
  if (e.key === "0") return 1;
  return null;
}

let level = 1;

/** One step in (+1), out (−1), or back to 100 % (0): what the keys do, for the command palette. */
export function zoomStep(dir: 1 | -1 | 0): void {
  const key = dir === 1 ? "=" : dir === -1 ? "-" : "0";
  const next = zoomFor(new KeyboardEvent("keydown", { key, ctrlKey: true }), level);
  if (next !== null) {
    level = next;
    applyZoom(level);
  }
}

/** Installs the keys and the remembered zoom; returns the uninstall function. */
export function installZoom(): () => void {
  level = read();
  applyZoom(level);
  const onKey = (e: KeyboardEvent) => {
    const next = zoomFor(e, level);
    if (next === null) return;
    e.preventDefault();
    level = next;
    applyZoom(level);
  };
  window.addEventListener("keydown", onKey);
  return () => window.removeEventListener("keydown", onKey);
}
