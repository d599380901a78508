import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { SessionDetail, TrustView } from "../../protocol/generated";
import { ApiError } from "../../transport/types";
import { SessionView } from "../SessionView";
import { fakeTransport, Providers, type Handler } from "../testing";
import { TrustBanner } from "./TrustBanner";

const view = (over: Partial<TrustView> = {}): TrustView => ({
  directory: "/p",
  trusted: false,
  project_hooks: 2,
  hooks_approved: false,
  ...over,
});

/** A server holding one workspace's trust: GET reads it, POST trusts (approving the hooks). */
function server(initial: TrustView, post?: Handler) {
  let current = initial;
  const fake = fakeTransport((method, path, body) => {
    if (path.startsWith("/api/trust")) {
      if (method === "GET") return current;
      if (post) return post(method, path, body);
      const { trusted } = body as { trusted: boolean };
      current = { ...current, trusted, hooks_approved: trusted && current.project_hooks > 0 };
      return current;
    }
    return undefined;
  });
  return { fake, set: (v: TrustView) => (current = v) };
}

function renderBanner(fake: ReturnType<typeof fakeTransport>, directory = "/p") {
  return render(
    <Providers transport={fake.transport}>
      <TrustBanner directory={directory} />
    </Providers>,
  );
}

const gets = (fake: ReturnType<typeof fakeTransport>) =>
  fake.requests.filter((r) => r.method === "GET" && r.path.startsWith("/api/trust"));

describe("the trust prompt", () => {
  it("asks to trust an untrusted workspace whose project defines hooks", async () => {
    const { fake } = server(view({ project_hooks: 2 }));
    renderBanner(fake);
    const banner = await screen.findByRole("region", { name: "Workspace trust" });
    expect(banner).toHaveTextContent(
      "This project defines 2 hooks (commands mia-code runs at points of a session). They do not run until you trust this workspace.",
    );
    expect(screen.getByRole("button", { name: "Trust and run hooks" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Not now" })).toBeInTheDocument();
    expect(gets(fake)[0]!.path).toBe("/api/trust?directory=%2Fp");
  });

  it("says one hook in the singular", async () => {
    const { fake } = server(view({ project_hooks: 1 }));
    renderBanner(fake);
    expect(await screen.findByTestId("trust-text")).toHaveTextContent("This project defines 1 hook (commands");
  });

  it("Trust and run hooks posts {directory, trusted: true} and the prompt goes with the answer", async () => {
    const { fake } = server(view());
    renderBanner(fake);
    await userEvent.setup().click(await screen.findByRole("button", { name: "Trust and run hooks" }));
    await waitFor(() => expect(screen.queryByTestId("trust-banner")).toBeNull());
    const posts = fake.requests.filter((r) => r.method === "POST");
    expect(posts).toEqual([{ method: "POST", path: "/api/trust", body: { directory: "/p", trusted: true } }]);
    // The answer went into the cache: not read again to know.
    expect(gets(fake)).toHaveLength(1);
  });

  it("asks to approve again when the trusted workspace's hooks changed", async () => {
    const { fake } = server(view({ trusted: true, project_hooks: 3, hooks_approved: false }));
    renderBanner(fake);
    const banner = await screen.findByRole("region", { name: "Workspace trust" });
    expect(banner).toHaveTextContent(
      "This project's hooks changed since you trusted it; they do not run until you approve them again.",
    );
    expect(screen.queryByRole("button", { name: "Trust and run hooks" })).toBeNull();
    await userEvent.setup().click(screen.getByRole("button", { name: "Approve hooks" }));
    await waitFor(() => expect(screen.queryByTestId("trust-banner")).toBeNull());
    expect(fake.requests.find((r) => r.method === "POST")?.body).toEqual({ directory: "/p", trusted: true });
  });

  it.each([
    ["the project defines no hooks", view({ project_hooks: 0 })],
    ["no hooks, trusted", view({ trusted: true, project_hooks: 0 })],
    ["its hooks are the approved set", view({ trusted: true, project_hooks: 2, hooks_approved: true })],
  ])("shows nothing when %s", async (_, v) => {
    const { fake } = server(v);
    renderBanner(fake);
    await waitFor(() => expect(gets(fake)).toHaveLength(1));
    // Let the answer land.
    await act(async () => new Promise((r) => setTimeout(r, 10)));
    expect(screen.queryByTestId("trust-banner")).toBeNull();
  });

  it("shows nothing when trust cannot be read (a server without the route)", async () => {
    const fake = fakeTransport(() => Promise.reject(new ApiError(404, "not found")));
    renderBanner(fake);
    await waitFor(() => expect(gets(fake)).toHaveLength(1));
    await act(async () => new Promise((r) => setTimeout(r, 10)));
    expect(screen.queryByTestId("trust-banner")).toBeNull();
  });

  it("Not now hides it for that folder for the window's life, without trusting", async () => {
    const { fake } = server(view({ directory: "/later" }));
    const first = renderBanner(fake, "/later");
    await userEvent.setup().click(await screen.findByRole("button", { name: "Not now" }));
    expect(screen.queryByTestId("trust-banner")).toBeNull();
    expect(fake.requests.filter((r) => r.method === "POST")).toEqual([]);
    first.unmount();
    // Opened again (another session of the folder): still hidden; another folder still asks.
    renderBanner(fake, "/later");
    await act(async () => new Promise((r) => setTimeout(r, 10)));
    expect(screen.queryByTestId("trust-banner")).toBeNull();
    renderBanner(fake, "/other");
    expect(await screen.findByTestId("trust-banner")).toBeInTheDocument();
  });

  it("shows the request's error inline and keeps asking", async () => {
    const { fake } = server(view(), () => Promise.reject(new ApiError(400, "the project's config does not load: bad JSON")));
    renderBanner(fake);
    await userEvent.setup().click(await screen.findByRole("button", { name: "Trust and run hooks" }));
    expect(await screen.findByTestId("trust-error")).toHaveTextContent(
      "Could not trust this workspace: the project's config does not load: bad JSON",
    );
    expect(screen.getByTestId("trust-banner")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Trust and run hooks" })).toBeEnabled();
  });

  it("reads trust again on a session's notice and when its turn finishes", async () => {
    const { fake, set } = server(view({ project_hooks: 0 }));
    renderBanner(fake);
    await waitFor(() => expect(gets(fake)).toHaveLength(1));
    // A hook was added to the project's config, and a turn's start says the hooks do not run.
    set(view({ project_hooks: 1 }));
    act(() => fake.emit({ type: "notice", session_id: "s1", message: "the project's hooks do not run: trust it" }));
    expect(await screen.findByTestId("trust-banner")).toHaveTextContent("defines 1 hook");
    // Approved elsewhere (the CLI): the turn's end reads it again and the prompt goes.
    set(view({ trusted: true, project_hooks: 1, hooks_approved: true }));
    act(() =>
      fake.emit({ type: "turn_finished", session_id: "s1", end: "completed", steps: 1, usage: { input: 1, output: 1 } }),
    );
    await waitFor(() => expect(screen.queryByTestId("trust-banner")).toBeNull());
    expect(gets(fake)).toHaveLength(3);
  });
});

describe("the trust prompt in the session view", () => {
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

  it("sits above the composer, for the session's folder", async () => {
    const fake = fakeTransport((method, path) => {
      if (method === "GET" && path === "/api/sessions/s1") return detail;
      if (path.endsWith("/timeline")) return [];
      if (path.startsWith("/api/trust")) return view();
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    const banner = await screen.findByRole("region", { name: "Workspace trust" });
    const composer = screen.getByTestId("prompt-input");
    expect(banner.compareDocumentPosition(composer) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(banner.nextElementSibling).toHaveClass("input-row");
    expect(gets(fake).every((r) => r.path === "/api/trust?directory=%2Fp")).toBe(true);
  });
});
