import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, render, screen } from "@testing-library/react";
import { formatElapsed, RunningIndicator } from "./RunningIndicator";

describe("the running indicator", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date(2026, 0, 1, 12, 0, 0));
  });
  afterEach(() => vi.useRealTimers());

  it("formats elapsed time in seconds, minutes and hours", () => {
    expect(formatElapsed(0)).toBe("0s");
    expect(formatElapsed(42.7)).toBe("42s");
    expect(formatElapsed(185)).toBe("3m 05s");
    expect(formatElapsed(3720)).toBe("1h 02m");
  });

  it("shows a spinner and the time since the turn started, ticking each second", () => {
    render(<RunningIndicator label="Working" since={Date.now() - 65_000} />);
    const el = screen.getByTestId("running-indicator");
    expect(el).toHaveTextContent("Working");
    expect(el.querySelector("svg.spin")).not.toBeNull();
    expect(screen.getByTestId("running-elapsed")).toHaveTextContent("1m 05s");
    act(() => {
      vi.advanceTimersByTime(2000);
    });
    expect(screen.getByTestId("running-elapsed")).toHaveTextContent("1m 07s");
  });

  it("counts from when it appeared when the start is unknown or in the future", () => {
    render(<RunningIndicator label="Compacting" since={Date.now() + 60_000} />);
    expect(screen.getByTestId("running-elapsed")).toHaveTextContent("0s");
    act(() => {
      vi.advanceTimersByTime(3000);
    });
    expect(screen.getByTestId("running-elapsed")).toHaveTextContent("3s");
  });
});
