import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import type { Session, SessionDetail } from "../protocol/generated";
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

describe("the session view's side panel", () => {
  it("mounts after the view's first paint, in the place kept for it", async () => {
    const detail: SessionDetail = { session, agent: "build", messages: [] };
    const fake = fakeTransport((method, path) => {
      if (method === "GET" && path === "/api/sessions/s1") return detail;
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    const { container } = render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    // The first commit: the conversation and the composer, the panel's place empty.
    expect(screen.getByTestId("conversation")).toBeTruthy();
    expect(screen.queryByTestId("tab-changes")).toBeNull();
    expect(container.querySelector(".right-panel[aria-busy=true]")).not.toBeNull();
    // A frame later: its tabs, where the placeholder was.
    expect(await screen.findByTestId("tab-changes")).toBeTruthy();
    expect(container.querySelector(".right-panel[aria-busy=true]")).toBeNull();
    expect(container.querySelectorAll(".right-panel")).toHaveLength(1);
  });
});
