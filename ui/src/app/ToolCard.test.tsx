import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/react";
import { ToolCard } from "./ToolCard";

const base = { callId: "b1", tool: "bash", input: { command: "make" }, messageId: "m1" };

describe("ToolCard: live output", () => {
  it("shows the tail of a running command's output", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    render(<ToolCard info={{ ...base, live: lines }} running onDiff={() => undefined} />);
    const live = screen.getByTestId("tool-card-live");
    expect(live).toHaveTextContent("line 30");
    expect(live).toHaveTextContent("line 19");
    expect(live).not.toHaveTextContent("line 18 ");
    expect(live).toHaveTextContent("… 18 earlier lines");
    expect(screen.queryByTestId("tool-card-result")).toBeNull();
  });

  it("shows the result, not the live view, once the command is done", () => {
    render(<ToolCard info={{ ...base, live: "partial", output: "all of it" }} running onDiff={() => undefined} />);
    expect(screen.queryByTestId("tool-card-live")).toBeNull();
    expect(screen.getByTestId("tool-card-result")).toHaveTextContent("all of it");
  });

  it("a stopped turn does not pretend the command still streams", () => {
    render(<ToolCard info={{ ...base, live: "partial" }} running={false} onDiff={() => undefined} />);
    expect(screen.queryByTestId("tool-card-live")).toBeNull();
  });
});

describe("ToolCard: expansion", () => {
  it("stays open when the card is unmounted and drawn again (virtualisation, session switch)", () => {
    const info = { ...base, callId: "keep-1", output: "ok" };
    const first = render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    expect(screen.queryByLabelText("Arguments")).toBeNull();
    fireEvent.click(screen.getByRole("button", { expanded: false }));
    expect(screen.getByLabelText("Arguments")).toBeInTheDocument();
    first.unmount();
    render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    expect(screen.getByLabelText("Arguments")).toBeInTheDocument();
    // Another call starts folded.
    render(<ToolCard info={{ ...info, callId: "other-1" }} running={false} onDiff={() => undefined} />);
    expect(screen.getAllByLabelText("Arguments")).toHaveLength(1);
  });
});
