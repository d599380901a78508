import { afterEach, describe, expect, it } from "vitest";
import { applyZoom, installZoom, zoomFor } from "./zoom";

const key = (k: string, mods: Partial<KeyboardEventInit> = { ctrlKey: true }) => new KeyboardEvent("keydown", { key: k, ...mods, cancelable: true });

describe("zoom", () => {
  afterEach(() => applyZoom(1));

  it("steps in and out, resets, and ignores other keys", () => {
    expect(zoomFor(key("="), 1)).toBe(1.1);
    expect(zoomFor(key("+"), 1.1)).toBe(1.25);
    expect(zoomFor(key("-"), 1)).toBe(0.9);
    expect(zoomFor(key("0"), 1.5)).toBe(1);
    expect(zoomFor(key("=", { metaKey: true }), 1)).toBe(1.1);
    expect(zoomFor(key("="), 2)).toBe(2);
    expect(zoomFor(key("=", {}), 1)).toBeNull();
    expect(zoomFor(key("k"), 1)).toBeNull();
  });

  it("applies to the whole window and is remembered", () => {
    const stop = installZoom();
    const e = key("=");
    window.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(true);
    expect(document.documentElement.dataset.zoom).toBe("1.1");
    expect(localStorage.getItem("mia-code.zoom")).toBe("1.1");
    stop();
    // A new window starts at the remembered zoom.
    const again = installZoom();
    expect(document.documentElement.dataset.zoom).toBe("1.1");
    window.dispatchEvent(key("0"));
    expect(document.documentElement.dataset.zoom).toBe("1");
    expect(localStorage.getItem("mia-code.zoom")).toBeNull();
    again();
  });
});
