import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { Session, SessionDetail, TimelineStep } from "../protocol/generated";
import { SessionView } from "./SessionView";
import { fakeTransport, Providers } from "./testing";

const session: Session = {
  id: "s1",
  title: "Fix it",
  slug: "fix-it",
  directory: "/p",
  project_id: "x",
  status: "idle",
  created_at: 1,
  updated_at: 2,
  version: "0.1",
};

const STEP: TimelineStep = {
  id: "st1",
  index: 1,
  kind: "tool",
  message_id: "m1",
  before: "a",
  after: "b",
  created_at: 1,
  undone: false,
  tool: "write",
  changes: [{ path: "src/a.ts", kind: "modified", additions: 1, deletions: 0 }],
};

function renderView(steps: TimelineStep[]) {
  const detail: SessionDetail = { session, agent: "build", messages: [] };
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path === "/api/sessions/s1") return detail;
    if (path.endsWith("/timeline")) return steps;
    return undefined;
  });
  return render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
    </Providers>,
  );
}

describe("the session view's side panel", () => {
  it("mounts after the view's first paint, when the session has changes to show", async () => {
    const { container } = renderView([STEP]);
    // The first commit: the conversation and the composer, no panel yet.
    expect(screen.getByTestId("conversation")).toBeTruthy();
    expect(screen.queryByTestId("tab-changes")).toBeNull();
    // Then its tabs, in one panel.
    expect(await screen.findByTestId("tab-changes")).toBeTruthy();
    expect(container.querySelector(".right-panel[aria-busy=true]")).toBeNull();
    expect(container.querySelectorAll(".right-panel")).toHaveLength(1);
  });

  it("stays closed while there is nothing to show, and opens from the header", async () => {
    const { container } = renderView([]);
    const toggle = await screen.findByTestId("toggle-panel");
    await waitFor(() => expect(toggle).toHaveAttribute("aria-pressed", "false"));
    expect(container.querySelector(".right-panel")).toBeNull();
    fireEvent.click(toggle);
    expect(await screen.findByTestId("tab-changes")).toBeTruthy();
    expect(toggle).toHaveAttribute("aria-pressed", "true");
  });
});
