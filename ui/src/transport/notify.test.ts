import { afterEach, describe, expect, it, vi } from "vitest";
import { browserPlatform } from "./http";
import { whenFocused } from "./tauri";

describe("notification clicks", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("browser: clicking the notification focuses the window and runs the action", () => {
    const made: { onclick: (() => void) | null; close: () => void }[] = [];
    class FakeNotification {
      static permission = "granted";
      onclick: (() => void) | null = null;
      close = vi.fn();
      constructor(
        public title: string,
        public opts: unknown,
      ) {
        made.push(this);
      }
    }
    vi.stubGlobal("Notification", FakeNotification);
    Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
    const focus = vi.spyOn(window, "focus").mockImplementation(() => undefined);
    const open = vi.fn();
    browserPlatform.notify("mia-code needs you", "build asks to use bash", open);
    expect(made).toHaveLength(1);
    expect(open).not.toHaveBeenCalled();
    made[0]!.onclick!();
    expect(open).toHaveBeenCalledTimes(1);
    expect(focus).toHaveBeenCalled();
    expect(made[0]!.close).toHaveBeenCalled();
    Object.defineProperty(document, "hidden", { configurable: true, get: () => false });
  });

  it("browser: a visible tab notifies only when its window is not focused", () => {
    const made: string[] = [];
    class FakeNotification {
      static permission = "granted";
      onclick: (() => void) | null = null;
      close = vi.fn();
      constructor(title: string) {
        made.push(title);
      }
    }
    vi.stubGlobal("Notification", FakeNotification);
    Object.defineProperty(document, "hidden", { configurable: true, get: () => false });
    const focus = vi.spyOn(document, "hasFocus").mockReturnValue(true);
    browserPlatform.notify("focused", "b");
    expect(made).toEqual([]);
    focus.mockReturnValue(false);
    browserPlatform.notify("unfocused", "b");
    expect(made).toEqual(["unfocused"]);
    focus.mockRestore();
  });

  it("desktop: the action runs when the window is focused again soon, once, the latest one", () => {
    let t = 1_000;
    const a = vi.fn();
    const b = vi.fn();
    whenFocused(a, () => t);
    whenFocused(b, () => t);
    t += 5_000;
    window.dispatchEvent(new Event("focus"));
    expect(a).not.toHaveBeenCalled();
    expect(b).toHaveBeenCalledTimes(1);
    window.dispatchEvent(new Event("focus"));
    expect(b).toHaveBeenCalledTimes(1);
    // Back after a long time: not because of the notification.
    const c = vi.fn();
    whenFocused(c, () => t);
    t += 10 * 60_000;
    window.dispatchEvent(new Event("focus"));
    expect(c).not.toHaveBeenCalled();
  });
});
