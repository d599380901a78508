import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, fireEvent, render, screen } from "@testing-library/react";
import { ToastProvider, useClearToastsOn, useToast } from "./context";

/** Buttons that say things through the toasts. */
function Sayer() {
  const toast = useToast();
  return (
    <>
      <button type="button" onClick={() => toast("Installing plugin x@^1.0.0...", "notice")}>
        notice
      </button>
      <button type="button" onClick={() => toast("✓ Installed plugin x@1.0.0", "notice")}>
        other
      </button>
      <button type="button" onClick={() => toast("boom")}>
        error
      </button>
    </>
  );
}

describe("toasts", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup() {
    render(
      <ToastProvider>
        <Sayer />
      </ToastProvider>,
    );
    const say = (name: string) => fireEvent.click(screen.getByRole("button", { name }));
    return { say };
  }

  it("a notice goes away by itself after a few seconds", () => {
    const { say } = setup();
    say("notice");
    const toast = screen.getByTestId("toast");
    expect(toast).toHaveTextContent("Installing plugin x@^1.0.0...");
    expect(toast).toHaveClass("toast-notice");
    expect(screen.getByRole("status")).toContainElement(toast);
    expect(screen.getByRole("status")).toHaveAttribute("aria-live", "polite");
    act(() => {
      vi.advanceTimersByTime(4900);
    });
    expect(screen.getByTestId("toast")).toBeInTheDocument();
    act(() => {
      vi.advanceTimersByTime(200);
    });
    expect(screen.queryByTestId("toast")).toBeNull();
  });

  it("the same text again counts on the one shown and starts its time over", () => {
    const { say } = setup();
    say("notice");
    act(() => {
      vi.advanceTimersByTime(3000);
    });
    say("notice");
    say("notice");
    expect(screen.getAllByTestId("toast")).toHaveLength(1);
    expect(screen.getByTestId("toast-count")).toHaveTextContent("×3");
    act(() => {
      vi.advanceTimersByTime(4000);
    });
    expect(screen.getByTestId("toast")).toHaveTextContent("Installing plugin x@^1.0.0...");
    act(() => {
      vi.advanceTimersByTime(1100);
    });
    expect(screen.queryByTestId("toast")).toBeNull();
    // Gone, it is new again.
    say("notice");
    expect(screen.getByTestId("toast")).toBeInTheDocument();
    expect(screen.queryByTestId("toast-count")).toBeNull();
  });

  it("only consecutive repeats merge; at most four show", () => {
    const { say } = setup();
    say("notice");
    say("other");
    say("notice");
    expect(screen.getAllByTestId("toast").map((t) => t.textContent)).toEqual([
      "Installing plugin x@^1.0.0...",
      "✓ Installed plugin x@1.0.0",
      "Installing plugin x@^1.0.0...",
    ]);
    say("error");
    say("other");
    expect(screen.getAllByTestId("toast")).toHaveLength(4);
    expect(screen.getAllByTestId("toast")[3]).toHaveTextContent("✓ Installed plugin x@1.0.0");
  });

  it("Dismiss removes it at once", () => {
    const { say } = setup();
    say("error");
    expect(screen.getByTestId("toast")).toHaveClass("toast-error");
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("toast")).toBeNull();
    say("error");
    expect(screen.queryByTestId("toast-count")).toBeNull();
  });
});

describe("toasts and screens", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function Screen({ name }: { name: string }) {
    useClearToastsOn(name);
    const toast = useToast();
    return (
      <button type="button" onClick={() => toast(`said on ${name}`, "info")}>
        say
      </button>
    );
  }

  it("a toast does not outlive its screen, except one said just as the screen changed", () => {
    const { rerender } = render(
      <ToastProvider>
        <Screen name="a" />
      </ToastProvider>,
    );
    fireEvent.click(screen.getByRole("button", { name: "say" }));
    expect(screen.getByTestId("toast")).toHaveTextContent("said on a");
    act(() => {
      vi.advanceTimersByTime(1500);
    });
    rerender(
      <ToastProvider>
        <Screen name="b" />
      </ToastProvider>,
    );
    expect(screen.queryByTestId("toast")).toBeNull();
    // Said, then the screen changes at once: it stays (it is the news of the change).
    fireEvent.click(screen.getByRole("button", { name: "say" }));
    rerender(
      <ToastProvider>
        <Screen name="c" />
      </ToastProvider>,
    );
    expect(screen.getByTestId("toast")).toHaveTextContent("said on b");
    // And leaves on its own.
    act(() => {
      vi.advanceTimersByTime(4100);
    });
    expect(screen.queryByTestId("toast")).toBeNull();
  });
});
