import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Message } from "../protocol/generated";
import { HistoryPanel } from "./HistoryPanel";

function msg(id: string, role: Message["role"], text: string, compacted_by: string | null = null): Message {
  return {
    id,
    session_id: "s1",
    role,
    type: "normal",
    metadata: {},
    created_at: 0,
    compacted_by,
    parts: [{ id: `p-${id}`, message_id: id, index: 0, created_at: 0, content: { type: "text", text } }],
  };
}

describe("HistoryPanel (/history --full)", () => {
  it("lists every message, the archived ones marked", async () => {
    const messages = [
      msg("m1", "user", "the original request", "sum"),
      msg("m2", "assistant", "an early answer", "sum"),
      msg("m3", "user", "a kept message"),
    ];
    render(<HistoryPanel load={() => Promise.resolve(messages)} refreshKey={0} />);
    expect(await screen.findByText("the original request")).toBeInTheDocument();
    expect(screen.getByText(/3 messages, 2 of them archived/)).toBeInTheDocument();
    const items = screen.getByTestId("history-full").querySelectorAll("li");
    expect(items).toHaveLength(3);
    expect(items[0]).toHaveAttribute("data-archived", "true");
    expect(items[2]).not.toHaveAttribute("data-archived");
    expect(screen.getAllByText("archived")).toHaveLength(2);
  });

  it("shows the server's error", async () => {
    render(<HistoryPanel load={() => Promise.reject(new Error("boom"))} refreshKey={0} />);
    expect(await screen.findByText(/boom/)).toBeInTheDocument();
  });
});
