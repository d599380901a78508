import { useSyncExternalStore } from "react";

/**
 * The window's theme: light, dark, or the system's ("follow the system", the default). The
 * choice is remembered in the window's storage; what it resolves to is `data-theme` on <html>,
 * which switches the one set of design tokens (styles/app.css) every component uses. Set before
 * the first paint (installTheme in main.tsx) and again whenever the system's scheme changes.
 */
export type ThemeChoice = "system" | "light" | "dark";
export const THEME_CHOICES: readonly ThemeChoice[] = ["system", "light", "dark"];
const KEY = "mia-code.theme";

let choice: ThemeChoice = "system";
const listeners = new Set<() => void>();
let media: MediaQueryList | null = null;

function stored(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

/** What a choice shows, given whether the system prefers dark. */
export function resolveTheme(c: ThemeChoice, systemDark: boolean): "light" | "dark" {
  return c === "system" ? (systemDark ? "dark" : "light") : c;
}

function apply() {
  const root = document.documentElement;
  root.dataset.theme = resolveTheme(choice, media?.matches ?? false);
  root.dataset.themeChoice = choice;
}

/** Reads the remembered choice, applies it and follows the system's scheme; returns the uninstall function. */
export function installTheme(): () => void {
  choice = stored();
  media = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  const onChange = () => apply();
  media?.addEventListener("change", onChange);
  apply();
  return () => media?.removeEventListener("change", onChange);
}

export function getTheme(): ThemeChoice {
  return choice;
}

export function setTheme(next: ThemeChoice): void {
  choice = next;
  try {
    if (next === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
  } catch {
    /* no storage: the choice lasts as long as the window */
  }
  apply();
  for (const fn of [...listeners]) fn();
}

const subscribe = (fn: () => void) => {
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
  };
};

/** The current choice, for Settings and the command palette. */
export function useTheme(): ThemeChoice {
  return useSyncExternalStore(subscribe, getTheme);
}
