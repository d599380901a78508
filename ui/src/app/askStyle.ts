import { useSyncExternalStore } from "react";

/**
 * How permission asks of the session on screen are shown: at their tool card in the transcript
 * (the default), or in the dialog over the page ("Show permission asks as a dialog" in Settings).
 * Asks of other sessions always use the dialog (the attention queue). Remembered in the window's
 * storage, like the theme.
 */
const KEY = "mia-code.asksAsDialog";
const listeners = new Set<() => void>();

function read(): boolean {
  try {
    return localStorage.getItem(KEY) === "1";
  } catch {
    return false;
  }
}

let value: boolean | null = null;

export function getAsksAsDialog(): boolean {
  if (value === null) value = read();
  return value;
}

export function setAsksAsDialog(next: boolean): void {
  value = next;
  try {
    if (next) localStorage.setItem(KEY, "1");
    else localStorage.removeItem(KEY);
  } catch {
    /* no storage: the choice lasts as long as the window */
  }
  for (const fn of [...listeners]) fn();
}

const subscribe = (fn: () => void) => {
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
  };
};

export function useAsksAsDialog(): boolean {
  return useSyncExternalStore(subscribe, getAsksAsDialog);
}

/** Forgets the cached choice (tests that change the storage between renders). */
export function resetAsksAsDialog(): void {
  value = null;
}
