import { describe, expect, it, vi } from "vitest";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Session } from "../../protocol/generated";
import { fromDetail } from "../../state/session";
import { fakeTransport, Providers } from "../testing";
import { SessionHeader } from "./SessionHeader";

const session: Session = {
  id: "s2",
  title: "Fix it (fork)",
  slug: "fix-it",
  directory: "/p",
  project_id: "x",
  status: "idle",
  created_at: 1,
  updated_at: 2,
  version: "0.1",
  parent_id: "s1",
};

function setup() {
  const fake = fakeTransport(() => undefined);
  const props = {
    onHideCommentary: vi.fn(),
    onPanel: vi.fn(),
    onShare: vi.fn(),
    onReview: vi.fn(),
    onForkTree: vi.fn(),
    onCompareSessions: vi.fn(),
  };
  render(
    <Providers transport={fake.transport}>
      <SessionHeader
        sessionId="s2"
        state={fromDetail({ session, agent: "build", messages: [] })}
        title="Fix it (fork)"
        spawnedTitle=""
        totals={{ input: 1200, output: 30, cost: 0.01, priced: true }}
        hideCommentary={false}
        panel={null}
        {...props}
      />
    </Providers>,
  );
  return props;
}

describe("the session header", () => {
  it("has icon buttons named for what they do, with tooltips", async () => {
    const props = setup();
    const user = userEvent.setup();
    for (const name of ["Hide commentary", "Fork tree", "Compare with parent", "Review", "Share"]) {
      expect(screen.getByRole("button", { name })).toBeInTheDocument();
    }
    await user.click(screen.getByRole("button", { name: "Fork tree" }));
    expect(props.onForkTree).toHaveBeenCalledWith("s2");
    await user.click(screen.getByTestId("toggle-panel"));
    expect(props.onPanel).toHaveBeenCalledWith("changes");
  });

  it("has an overflow menu with every action by name", async () => {
    const props = setup();
    const user = userEvent.setup();
    await user.click(screen.getByTestId("session-more"));
    const menu = await screen.findByRole("menu");
    const items = within(menu).getAllByRole("menuitem").map((i) => i.textContent);
    expect(items).toEqual([
      "Hide commentary",
      "Compare with parent",
      "Share…",
      "Search this session (Ctrl+F)",
      "Cost by agent and model",
      "History",
    ]);
    await user.click(within(menu).getByRole("menuitem", { name: "Compare with parent" }));
    expect(props.onCompareSessions).toHaveBeenCalledWith("s2", "s1");
  });
});
