import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { ContextMeter } from "./ContextMeter";
import { applyEvent, emptySession, fromDetail } from "../state/session";

const usage = { tokens: 45_000, window: 200_000, budget: 152_000, model: "anthropic/claude-sonnet-4-5", complete: true };

describe("context meter", () => {
  it("shows the estimate against the window and where compaction starts", () => {
    render(<ContextMeter usage={usage} />);
    const m = screen.getByTestId("context-meter");
    expect(m).toHaveTextContent("45k / 200k (23%)");
    expect(m).toHaveAttribute("data-level", "ok");
    expect(m.title).toContain("automatic compaction starts at 152,000");
  });

  it("warns near the compaction point and when past it; says when only the history is counted", () => {
    const { rerender } = render(<ContextMeter usage={{ ...usage, tokens: 130_000 }} />);
    expect(screen.getByTestId("context-meter")).toHaveAttribute("data-level", "near");
    rerender(<ContextMeter usage={{ ...usage, tokens: 160_000, complete: false }} />);
    const m = screen.getByTestId("context-meter");
    expect(m).toHaveAttribute("data-level", "full");
    expect(m).toHaveTextContent("≈160k / 200k (80%)");
    expect(m.title).toContain("history only");
  });

  it("follows context_usage events and the session detail", () => {
    let s = emptySession("s1");
    s = applyEvent(s, { type: "context_usage", session_id: "s1", usage });
    expect(s.context).toEqual(usage);
    expect(applyEvent(s, { type: "context_usage", session_id: "other", usage: { ...usage, tokens: 1 } }).context).toEqual(usage);
    const d = fromDetail({
      session: { id: "s1" } as never,
      messages: [],
      agent: "build",
      context: { ...usage, tokens: 7 },
    });
    expect(d.context?.tokens).toBe(7);
  });
});
