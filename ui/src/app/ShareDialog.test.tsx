import { afterEach, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Session, SessionDetail, SharedMessage, SharePreview, ShareRecord, ShareRequest } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { formatDate } from "../lib/format";
import { markRedactions } from "../lib/share";
import { NO_SHARE_SERVER, ShareDialog } from "./ShareDialog";
import { SessionView } from "./SessionView";
import { fakePlatform, fakeTransport, Providers, type Handler } from "./testing";

const u1: SharedMessage = {
  id: "u1",
  role: "user",
  created_at: 1,
  parts: [{ type: "text", content: "Use key [REDACTED:openai-api-key] from ~/proj and keep **this** plain" }],
};
const a1: SharedMessage = {
  id: "a1",
  role: "assistant",
  created_at: 2,
  metadata: { model: "anthropic/claude-haiku-4-5" },
  parts: [
    { type: "text", content: "Reading the env file." },
    { type: "tool_call", call_id: "c1", name: "read", args: { path: "~/proj/.env" } },
    { type: "tool_result", call_id: "c1", name: "read", output: "TOKEN=[REDACTED:env-value]\nDEBUG=1" },
  ],
};
const u2: SharedMessage = { id: "u2", role: "user", created_at: 3, parts: [{ type: "text", content: "Thanks, 5 ~ 6 min" }] };

const redactions: SharePreview["redactions"] = [
  { kind: "openai-api-key", place: { in: "message", message_id: "u1", part: 0 }, replacement: "[REDACTED:openai-api-key]", hint: "sk-p…9f" },
  { kind: "home-path", place: { in: "message", message_id: "u1", part: 0 }, replacement: "~", hint: "/home/ann" },
  { kind: "home-path", place: { in: "message", message_id: "a1", part: 1 }, replacement: "~", hint: "/home/ann" },
  { kind: "env-value", place: { in: "message", message_id: "a1", part: 2 }, replacement: "[REDACTED:env-value]", hint: "ab…cd" },
];

const record = (over: Partial<ShareRecord> = {}): ShareRecord => ({
  id: "sh1",
  url: "https://share.example.org/s/sh1#k",
  server: "https://share.example.org",
  session_id: "s1",
  session_title: "Fix it",
  created_at: 1_000,
  updated_at: Date.now() - 5 * 60_000,
  expires_at: Date.UTC(2031, 0, 15, 12, 0),
  ...over,
});

/** The server's preview for a request: the excluded messages gone, excluded results omitted. */
function previewFor(req: ShareRequest, over: Partial<SharePreview> = {}): SharePreview {
  const out = new Set(req.exclude_messages ?? []);
  const omit = new Set(req.exclude_tool_results ?? []);
  const messages = [u1, a1, u2]
    .filter((m) => !out.has(m.id))
    .map((m) => ({
      ...m,
      parts: m.parts.map((p) => (p.type === "tool_result" && omit.has(p.call_id) ? { ...p, output: "", omitted: true } : p)),
    }));
  const kept = redactions.filter(
    (r) => r.place.in !== "message" || (!out.has(r.place.message_id) && !(r.kind === "env-value" && omit.has("c1"))),
  );
  return {
    payload: { version: "1.0", session: { id: "s1", title: "Fix it", project: "proj", created_at: 1 }, messages },
    redactions: kept,
    server: "https://share.example.org",
    mode: "ask",
    bytes: 2048 - out.size * 500,
    ...over,
  };
}

function setup(handler: Handler = () => undefined, over: Partial<SharePreview> = {}) {
  const fake = fakeTransport((method, path, body) => {
    if (method === "POST" && path === "/api/sessions/s1/share/preview") return previewFor(body as ShareRequest, over);
    return handler(method, path, body);
  });
  const onClose = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <ShareDialog sessionId="s1" onClose={onClose} />
    </Providers>,
  );
  const previews = () => fake.requests.filter((r) => r.path === "/api/sessions/s1/share/preview");
  return { ...fake, previews, onClose, user: userEvent.setup() };
}

afterEach(() => vi.restoreAllMocks());

describe("the share dialog", () => {
  it("shows the payload as plain text, every redaction marked, counted and listed", async () => {
    const ctx = setup();
    const dialog = await screen.findByTestId("share-dialog");
    expect(within(dialog).getByRole("heading", { name: "Share session" })).toBeInTheDocument();
    await screen.findAllByTestId("share-message");
    // Asked for with no exclusions first.
    expect(ctx.previews()).toEqual([
      { method: "POST", path: "/api/sessions/s1/share/preview", body: { exclude_messages: [], exclude_tool_results: [] } },
    ]);
    expect(screen.getByTestId("share-redaction-count")).toHaveTextContent("2 secrets redacted · home path replaced 2 times");
    expect(screen.getByTestId("share-target")).toHaveTextContent("Uploads to https://share.example.org · 2.0 KB");

    const marks = dialog.querySelectorAll("mark.redaction");
    expect([...marks].map((m) => m.textContent)).toEqual(["[REDACTED:openai-api-key]", "~", "~", "[REDACTED:env-value]"]);
    expect(marks[0]).toHaveAttribute("title", "openai-api-key: sk-p…9f");
    expect(marks[1]).toHaveAttribute("title", "home-path: /home/ann");
    expect(marks[3]).toHaveAttribute("title", "env-value: ab…cd");

    // Text is shown as text: the Markdown stays as written.
    const [first] = screen.getAllByTestId("share-message");
    expect(first).toHaveTextContent("Use key [REDACTED:openai-api-key] from ~/proj and keep **this** plain");
    expect(first!.querySelector("strong")).toBeNull();
    // A `~` nobody replaced (the second user message) is not marked.
    const last = screen.getAllByTestId("share-message")[2]!;
    expect(last).toHaveTextContent("Thanks, 5 ~ 6 min");
    expect(last.querySelector("mark")).toBeNull();

    // Tool call: name and arguments as JSON; its result collapsed.
    const call = screen.getByTestId("share-tool-call");
    expect(call).toHaveTextContent("read");
    expect(call.querySelector("pre")?.textContent).toBe('{\n  "path": "~/proj/.env"\n}');
    const result = screen.getByTestId("share-tool-result");
    const details = result.querySelector("details")!;
    expect(details).not.toHaveAttribute("open");
    expect(details.querySelector("pre")?.textContent).toBe("TOKEN=[REDACTED:env-value]\nDEBUG=1");

    const list = screen.getByTestId("share-redactions");
    const items = within(list).getAllByRole("listitem");
    expect(items.map((i) => i.textContent)).toEqual([
      "openai-api-key in message 1 (user), part 1 sk-p…9f",
      "home-path in message 1 (user), part 1 /home/ann",
      "home-path in message 2 (assistant), part 2 /home/ann",
      "env-value in message 2 (assistant), part 3 ab…cd",
    ]);
    expect(screen.getByTestId("share-submit")).toHaveTextContent("Share publicly");
  });

  it("unchecking a message asks for the preview again (debounced) without it, and checking it takes it back", async () => {
    const ctx = setup();
    await screen.findAllByTestId("share-message");
    await ctx.user.click(screen.getByRole("checkbox", { name: "Include message 1 (user)" }));
    // The choice shows at once; the preview is asked for after the debounce.
    expect(screen.getByRole("checkbox", { name: "Include message 1 (user)" })).not.toBeChecked();
    expect(screen.getAllByTestId("share-message")[0]).toHaveAttribute("data-excluded", "true");
    expect(ctx.previews()).toHaveLength(1);
    expect(screen.getByTestId("share-submit")).toBeDisabled();
    await waitFor(() => expect(ctx.previews()).toHaveLength(2));
    expect(ctx.previews()[1]!.body).toEqual({ exclude_messages: ["u1"], exclude_tool_results: [] });
    // The row stays (to take it back in) without its content; its redactions are gone.
    await waitFor(() => expect(screen.getByTestId("share-redaction-count")).toHaveTextContent("1 secret redacted · home path replaced 1 time"));
    const row = screen.getAllByTestId("share-message")[0]!;
    expect(row).toHaveAttribute("data-message-id", "u1");
    expect(row).toHaveAttribute("data-excluded", "true");
    expect(row).not.toHaveTextContent("REDACTED");
    expect(screen.getByRole("checkbox", { name: "Include message 1 (user)" })).not.toBeChecked();
    expect(screen.getByTestId("share-submit")).toBeEnabled();

    // A tool result left out: exclude_tool_results names its call.
    await ctx.user.click(screen.getByRole("checkbox", { name: "Include the result of read (c1)" }));
    await waitFor(() => expect(ctx.previews()).toHaveLength(3));
    expect(ctx.previews()[2]!.body).toEqual({ exclude_messages: ["u1"], exclude_tool_results: ["c1"] });
    await waitFor(() => expect(screen.getByTestId("share-tool-result")).toHaveTextContent("(left out)"));

    await ctx.user.click(screen.getByRole("checkbox", { name: "Include message 1 (user)" }));
    await waitFor(() => expect(ctx.previews()).toHaveLength(4));
    expect(ctx.previews()[3]!.body).toEqual({ exclude_messages: [], exclude_tool_results: ["c1"] });
    await waitFor(() => expect(screen.getAllByTestId("share-message")[0]).toHaveTextContent("[REDACTED:openai-api-key]"));
  });

  it("Share publicly posts the exclusions and shows the link, Copy link, Open and the expiry", async () => {
    const ctx = setup((method, path) => (method === "POST" && path === "/api/sessions/s1/share" ? record() : undefined));
    // After userEvent.setup(), which puts a clipboard stub of its own in place.
    const writeText = vi.fn<(text: string) => Promise<void>>(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText } });
    await screen.findAllByTestId("share-message");
    await ctx.user.click(screen.getByRole("checkbox", { name: "Include message 3 (user)" }));
    await waitFor(() => expect(ctx.previews()).toHaveLength(2));
    await waitFor(() => expect(screen.getByTestId("share-submit")).toBeEnabled());
    await ctx.user.click(screen.getByTestId("share-submit"));
    const url = await screen.findByTestId("share-url");
    expect(ctx.requests).toContainEqual({
      method: "POST",
      path: "/api/sessions/s1/share",
      body: { exclude_messages: ["u2"], exclude_tool_results: [] },
    });
    expect(url).toHaveValue("https://share.example.org/s/sh1#k");
    expect(url).toHaveAttribute("readonly");
    expect(screen.getByTestId("share-current")).toHaveTextContent("Shared publicly.");
    expect(screen.getByTestId("share-expiry")).toHaveTextContent(`Expires ${formatDate(Date.UTC(2031, 0, 15, 12, 0))}`);
    const open = screen.getByRole("link", { name: "Open" });
    expect(open).toHaveAttribute("href", "https://share.example.org/s/sh1#k");
    expect(open).toHaveAttribute("target", "_blank");
    expect(open).toHaveAttribute("rel", "noopener noreferrer");
    await ctx.user.click(open);
    expect(fakePlatform.openExternal).toHaveBeenCalledWith("https://share.example.org/s/sh1#k");
    await ctx.user.click(screen.getByRole("button", { name: "Copy link" }));
    expect(writeText).toHaveBeenCalledWith("https://share.example.org/s/sh1#k");
    expect(await screen.findByTestId("toast")).toHaveTextContent("Link copied");
    // Shared now: sharing again updates it.
    expect(screen.getByTestId("share-submit")).toHaveTextContent("Update share");
  });

  it("with an existing share offers Update share, its link and Stop sharing (asked first)", async () => {
    const updated = record({ updated_at: Date.now() });
    const ctx = setup(
      (method, path) => {
        if (method === "POST" && path === "/api/sessions/s1/share") return updated;
        if (method === "DELETE" && path === "/api/sessions/s1/share") return undefined;
        return undefined;
      },
      { existing: record() },
    );
    expect(await screen.findByTestId("share-url")).toHaveValue("https://share.example.org/s/sh1#k");
    expect(screen.getByTestId("share-current")).toHaveTextContent("This session is shared.");
    expect(screen.getByTestId("share-expiry")).toHaveTextContent("last updated 5 min ago");
    expect(screen.getByRole("button", { name: "Copy link" })).toBeInTheDocument();
    const submit = screen.getByTestId("share-submit");
    expect(submit).toHaveTextContent("Update share");
    await ctx.user.click(submit);
    await waitFor(() => expect(screen.getByTestId("share-current")).toHaveTextContent("Share updated."));
    expect(ctx.requests.filter((r) => r.path === "/api/sessions/s1/share")).toEqual([
      { method: "POST", path: "/api/sessions/s1/share", body: { exclude_messages: [], exclude_tool_results: [] } },
    ]);

    await ctx.user.click(screen.getByTestId("share-revoke"));
    expect(ctx.requests.some((r) => r.method === "DELETE")).toBe(false);
    await ctx.user.click(screen.getByTestId("share-revoke-confirm"));
    await waitFor(() => expect(ctx.requests).toContainEqual({ method: "DELETE", path: "/api/sessions/s1/share", body: undefined }));
    await waitFor(() => expect(screen.queryByTestId("share-url")).not.toBeInTheDocument());
    expect(screen.getByTestId("share-submit")).toHaveTextContent("Share publicly");
    expect(await screen.findByTestId("toast")).toHaveTextContent("Stopped sharing");
  });

  it("with sharing disabled explains share.mode and offers no share button", async () => {
    setup(undefined, { mode: "disabled" });
    expect(await screen.findByTestId("share-disabled")).toHaveTextContent('Sharing is disabled: share.mode is "disabled"');
    expect(screen.queryByTestId("share-submit")).not.toBeInTheDocument();
    expect(screen.queryByTestId("share-message")).not.toBeInTheDocument();
  });

  it("without a share server says how to configure one and offers no share button", async () => {
    setup(undefined, { server: null });
    expect(await screen.findByTestId("share-no-server")).toHaveTextContent(NO_SHARE_SERVER);
    expect(screen.getByTestId("share-no-server")).toHaveTextContent("set share.endpoint in your global config (~/.config/mia-code/config.json or ~/.mia-code.json)");
    expect(screen.queryByTestId("share-submit")).not.toBeInTheDocument();
  });

  it("shows a failed upload as an alert and keeps the exclusions", async () => {
    let fail = true;
    const ctx = setup((method, path) => {
      if (method === "POST" && path === "/api/sessions/s1/share") {
        if (fail) throw new ApiError(502, "share server https://share.example.org: connection refused");
        return record();
      }
      return undefined;
    });
    await screen.findAllByTestId("share-message");
    await ctx.user.click(screen.getByRole("checkbox", { name: "Include message 2 (assistant)" }));
    await waitFor(() => expect(ctx.previews()).toHaveLength(2));
    await waitFor(() => expect(screen.getByTestId("share-submit")).toBeEnabled());
    await ctx.user.click(screen.getByTestId("share-submit"));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("share server https://share.example.org: connection refused");
    expect(screen.queryByTestId("share-url")).not.toBeInTheDocument();
    expect(screen.getByRole("checkbox", { name: "Include message 2 (assistant)" })).not.toBeChecked();
    // Again, with the same exclusions.
    fail = false;
    await ctx.user.click(screen.getByTestId("share-submit"));
    expect(await screen.findByTestId("share-url")).toHaveValue("https://share.example.org/s/sh1#k");
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    expect(ctx.requests.filter((r) => r.path === "/api/sessions/s1/share").map((r) => r.body)).toEqual([
      { exclude_messages: ["a1"], exclude_tool_results: [] },
      { exclude_messages: ["a1"], exclude_tool_results: [] },
    ]);
  });

  it("shows a failed preview as an alert with Try again", async () => {
    let fail = true;
    const fake = fakeTransport((method, path, body) => {
      if (path === "/api/sessions/s1/share/preview") {
        if (fail) throw new ApiError(400, "share.redact.patterns[1]: unclosed group");
        return previewFor(body as ShareRequest);
      }
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <ShareDialog sessionId="s1" onClose={() => undefined} />
      </Providers>,
    );
    const user = userEvent.setup();
    expect(await screen.findByRole("alert")).toHaveTextContent("share.redact.patterns[1]: unclosed group");
    expect(screen.queryByTestId("share-submit")).not.toBeInTheDocument();
    fail = false;
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByTestId("share-submit")).toBeEnabled();
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });
});

describe("marking redactions", () => {
  it("marks only as many `~` as were replaced, where a path goes on", () => {
    const r = redactions[1]!;
    const segs = markRedactions("about ~5 min in ~/proj", [r]);
    expect(segs).toEqual([{ text: "about ~5 min in " }, { text: "~", mark: r }, { text: "/proj" }]);
  });

  it("marks every [REDACTED:…] even when listed once", () => {
    const r = redactions[0]!;
    const segs = markRedactions("[REDACTED:openai-api-key] and [REDACTED:openai-api-key]", [r]);
    expect(segs.filter((s) => s.mark).length).toBe(2);
  });
});

const session = (over: Partial<Session> = {}): Session => ({
  id: "s1",
  title: "Fix it",
  slug: "fix-it",
  directory: "/p",
  project_id: "x",
  status: "idle",
  created_at: 1,
  updated_at: 2,
  version: "0.1",
  ...over,
});

describe("sharing from the session", () => {
  function open(shares: ShareRecord[]) {
    const detail: SessionDetail = { session: session(), agent: "build", messages: [] };
    const fake = fakeTransport((method, path, body) => {
      if (method === "GET" && path === "/api/sessions/s1") return detail;
      if (path.endsWith("/timeline")) return [];
      if (method === "GET" && path === "/api/shares") return shares;
      if (method === "POST" && path === "/api/sessions/s1/share/preview") return previewFor(body as ShareRequest);
      return undefined;
    });
    render(
      <Providers transport={fake.transport}>
        <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
      </Providers>,
    );
    return { ...fake, user: userEvent.setup() };
  }
  async function run(text: string, ctx: ReturnType<typeof open>) {
    const input = await screen.findByTestId("prompt-input");
    await ctx.user.click(input);
    await ctx.user.type(input, `${text}{Enter}`);
  }

  it("the header's Share button opens the dialog", async () => {
    const ctx = open([]);
    await ctx.user.click(await screen.findByTestId("share-session"));
    expect(await screen.findByTestId("share-dialog")).toBeInTheDocument();
    expect(await screen.findByTestId("share-submit")).toHaveTextContent("Share publicly");
  });

  it("/share opens the dialog (not sent as a message)", async () => {
    const ctx = open([]);
    await run("/share", ctx);
    expect(await screen.findByTestId("share-dialog")).toBeInTheDocument();
    await waitFor(() => expect(ctx.requests.some((r) => r.path === "/api/sessions/s1/share/preview")).toBe(true));
    expect(ctx.requests.some((r) => r.path === "/api/sessions/s1/messages")).toBe(false);
  });

  it("/unshare on a session that is not shared says so", async () => {
    const ctx = open([record({ id: "other", session_id: "s9" })]);
    await run("/unshare", ctx);
    expect(await screen.findByTestId("toast")).toHaveTextContent("This session is not shared");
    expect(screen.queryByTestId("unshare-confirm")).not.toBeInTheDocument();
    expect(ctx.requests.some((r) => r.method === "DELETE")).toBe(false);
  });

  it("/unshare asks, then revokes the session's share", async () => {
    const ctx = open([record()]);
    await run("/unshare", ctx);
    const confirm = await screen.findByTestId("unshare-confirm");
    expect(confirm).toHaveTextContent("https://share.example.org/s/sh1#k");
    expect(ctx.requests.some((r) => r.method === "DELETE")).toBe(false);
    await ctx.user.click(within(confirm).getByTestId("unshare-confirm-button"));
    await waitFor(() => expect(ctx.requests).toContainEqual({ method: "DELETE", path: "/api/sessions/s1/share", body: undefined }));
    expect(await screen.findByTestId("toast")).toHaveTextContent("Stopped sharing “Fix it”");
    expect(screen.queryByTestId("unshare-confirm")).not.toBeInTheDocument();
  });
});
