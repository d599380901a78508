import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getTheme, installTheme, resolveTheme, setTheme } from "./theme";

/** A matchMedia whose answer the test changes, telling its listeners as a browser does. */
function fakeMedia(dark: boolean) {
  const listeners = new Set<() => void>();
  const mql = {
    matches: dark,
    addEventListener: (_: string, fn: () => void) => listeners.add(fn),
    removeEventListener: (_: string, fn: () => void) => listeners.delete(fn),
  };
  vi.stubGlobal("matchMedia", () => mql);
  return {
    set(d: boolean) {
      mql.matches = d;
      for (const fn of listeners) fn();
    },
    listeners,
  };
}

describe("theme", () => {
  let uninstall: () => void = () => undefined;
  beforeEach(() => localStorage.clear());
  afterEach(() => {
    uninstall();
    vi.unstubAllGlobals();
    localStorage.clear();
  });

  it("resolves a choice against the system's scheme", () => {
    expect(resolveTheme("system", true)).toBe("dark");
    expect(resolveTheme("system", false)).toBe("light");
    expect(resolveTheme("light", true)).toBe("light");
    expect(resolveTheme("dark", false)).toBe("dark");
  });

  it("follows the system by default, also when the system changes", () => {
    const media = fakeMedia(false);
    uninstall = installTheme();
    const root = document.documentElement;
    expect(getTheme()).toBe("system");
    expect(root.dataset.theme).toBe("light");
    expect(root.dataset.themeChoice).toBe("system");
    media.set(true);
    expect(root.dataset.theme).toBe("dark");
    uninstall();
    expect(media.listeners.size).toBe(0);
  });

  it("a chosen theme holds whatever the system says, is remembered, and 'system' forgets it", () => {
    const media = fakeMedia(true);
    uninstall = installTheme();
    setTheme("light");
    const root = document.documentElement;
    expect(root.dataset.theme).toBe("light");
    expect(localStorage.getItem("mia-code.theme")).toBe("light");
    media.set(false);
    media.set(true);
    expect(root.dataset.theme).toBe("light");
    // A new window reads the remembered choice.
    uninstall();
    uninstall = installTheme();
    expect(getTheme()).toBe("light");
    setTheme("system");
    expect(localStorage.getItem("mia-code.theme")).toBeNull();
    expect(root.dataset.theme).toBe("dark");
  });

  it("ignores a stored value it does not know", () => {
    fakeMedia(false);
    localStorage.setItem("mia-code.theme", "purple");
    uninstall = installTheme();
    expect(getTheme()).toBe("system");
    expect(document.documentElement.dataset.theme).toBe("light");
  });
});
