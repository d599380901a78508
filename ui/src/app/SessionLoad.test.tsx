import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { SessionDetail } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { SessionView } from "./SessionView";
import { fakeTransport, Providers } from "./testing";

const detail: SessionDetail = {
  session: {
    id: "s1",
    title: "Fix it",
    slug: "fix-it",
    directory: "/p",
    project_id: "x",
    status: "idle",
    created_at: 1,
    updated_at: 2,
    version: "0.1",
  },
  agent: "build",
  messages: [],
  running: false,
};

describe("a session's loading and error states", () => {
  it("says it is loading until the session is read, then shows the empty session's hint", async () => {
    const waiting: (() => void)[] = [];
    const fake = fakeTransport((method, path) => {
      if (method === "GET" && path === "/api/sessions/s1") return new Promise((r) => waiting.push(() => r(detail)));
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    // Not read yet: loading, not the empty session's hint.
    expect(await screen.findByTestId("conversation-loading")).toHaveTextContent("Loading the conversation…");
    expect(screen.queryByText(/Ask for something to start/)).toBeNull();
    await waitFor(() => expect(waiting).toHaveLength(1));
    waiting[0]!();
    await screen.findByText(/Ask for something to start/);
    expect(screen.queryByTestId("conversation-loading")).toBeNull();
  });

  it("a session that cannot be read shows the error with Retry (not a spinner forever), and Retry loads it", async () => {
    let fail = true;
    const fake = fakeTransport((method, path) => {
      if (method === "GET" && path === "/api/sessions/s1") {
        return fail ? Promise.reject(new ApiError(500, "database is locked")) : detail;
      }
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    const banner = await screen.findByTestId("error-banner");
    expect(banner).toHaveTextContent("Could not load this session: database is locked");
    expect(screen.queryByTestId("conversation-loading")).toBeNull();
    fail = false;
    await userEvent.setup().click(screen.getByTestId("retry"));
    await screen.findByText(/Ask for something to start/);
    expect(screen.queryByTestId("error-banner")).toBeNull();
    expect(fake.requests.filter((r) => r.path === "/api/sessions/s1").length).toBeGreaterThanOrEqual(2);
  });
});
