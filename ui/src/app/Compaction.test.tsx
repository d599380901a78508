import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { CompactResult, Message, Session, SessionDetail } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { SessionView } from "./SessionView";
import { HelpText } from "./Help";
import { fakeTransport, Providers, type Handler } from "./testing";

function msg(id: string, role: Message["role"], text: string, extra: Partial<Message> = {}): Message {
  return {
    id,
    session_id: "s1",
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: [{ id: `${id}-0`, message_id: id, index: 0, created_at: 1, content: { type: "text", text } }],
    ...extra,
  };
}

const SUMMARY = "## Narrative\n\nThe user asked to **read the README**.\n\n## Next steps\n\n- write the notes";

function summaryMessage(id: string, trigger: string, over: Partial<Message["metadata"]> = {}, compacted = 4): Message {
  return {
    id,
    session_id: "s1",
    role: "system",
    type: "compaction_summary",
    created_at: 5,
    metadata: {
      agent: "compaction",
      model: "anthropic/claude-haiku-4-5",
      original_message_count: compacted,
      compacted_at: 5,
      summary_token_count: 300,
      trigger,
      tokens_before: 12_400,
      tokens_after: 3_100,
      retained: 2,
      ...over,
    },
    parts: [
      {
        id: `${id}-0`,
        message_id: id,
        index: 0,
        created_at: 5,
        content: { type: "compaction_summary", summary: SUMMARY, compacted_messages: compacted },
      },
    ],
  };
}

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

/** Four archived by c1, one by an older summary, the retained tail and the summary. */
const archive: Message[] = [
  msg("old", "user", "from an older round", { compacted_by: "c0" }),
  msg("u1", "user", "Read the README", { compacted_by: "c1" }),
  msg("a1", "assistant", "It describes a **tiny project**.", { compacted_by: "c1" }),
  msg("u2", "user", "Now the notes", { compacted_by: "c1" }),
  msg("a2", "assistant", "Wrote the notes.", { compacted_by: "c1" }),
  msg("u3", "user", "What next?"),
  msg("a3", "assistant", "Tests."),
];
const visible = [msg("u3", "user", "What next?"), msg("a3", "assistant", "Tests."), summaryMessage("c1", "manual")];

function setup(messages: Message[], handler: Handler = () => undefined, over: Partial<SessionDetail> = {}) {
  let detail: SessionDetail = { session: session(), agent: "build", messages, ...over };
  const fake = fakeTransport((method, path, body) => {
    if (method === "GET" && path === "/api/sessions/s1") return detail;
    if (path.endsWith("/timeline")) return [];
    return handler(method, path, body);
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView sessionId="s1" directory="/p" agents={[]} onNewSession={() => undefined} onSessionsChanged={() => undefined} />
    </Providers>,
  );
  const loads = () => fake.requests.filter((r) => r.method === "GET" && r.path === "/api/sessions/s1").length;
  const setDetail = (d: Partial<SessionDetail>) => {
    detail = { ...detail, ...d };
  };
  return { ...fake, loads, setDetail, user: userEvent.setup() };
}

// jsdom has no layout: give the scroll container a size so the virtualiser renders rows.
const stubbed = ["clientHeight", "clientWidth", "offsetHeight"] as const;
const originals = stubbed.map(
  (k) => Object.getOwnPropertyDescriptor(Element.prototype, k) ?? Object.getOwnPropertyDescriptor(HTMLElement.prototype, k),
);
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, "offsetHeight", { configurable: true, get: () => 40 });
});
afterAll(() => {
  stubbed.forEach((k, i) => {
    const d = originals[i];
    if (d) Object.defineProperty(HTMLElement.prototype, k, d);
    else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[k];
  });
});

describe("the compaction marker", () => {
  it("says how many messages, the tokens before and after and who triggered it", async () => {
    setup(visible);
    const marker = await screen.findByTestId("message-compaction");
    expect(marker).toHaveAttribute("role", "note");
    expect(within(marker).getByTestId("compaction-headline")).toHaveTextContent(
      "Compacted 4 messages · ~12k → ~3.1k tokens · by you",
    );
    // Not the generic system notice.
    expect(screen.queryByTestId("message-notice")).not.toBeInTheDocument();
  });

  it.each([
    ["messages", "automatically"],
    ["tokens", "automatically"],
    ["overflow", "the model's context was full"],
  ])("names the %s trigger as %j", async (trigger, words) => {
    setup([summaryMessage("c9", trigger, { tokens_before: 900, tokens_after: 120 }, 1)]);
    const headline = await screen.findByTestId("compaction-headline");
    expect(headline).toHaveTextContent(`Compacted 1 message · ~900 → ~120 tokens · ${words}`);
    expect(headline).not.toHaveTextContent("by you");
  });

  it("expands to the summary rendered as Markdown, and collapses again", async () => {
    const { user } = setup(visible);
    const toggle = await screen.findByTestId("compaction-summary-toggle");
    const region = screen.getByTestId("compaction-summary");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(toggle).toHaveAttribute("aria-controls", region.id);
    expect(region).not.toBeVisible();
    await user.click(toggle);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(toggle).toHaveTextContent("Hide the summary");
    expect(region).toBeVisible();
    expect(await within(region).findByRole("heading", { name: "Narrative" })).toBeInTheDocument();
    expect(within(region).getByText("read the README").tagName).toBe("STRONG");
    expect(within(region).getByText("write the notes")).toBeInTheDocument();
    // Keyboard: the toggle is a button, Enter closes it.
    toggle.focus();
    await user.keyboard("{Enter}");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(region).not.toBeVisible();
  });

  it("shows the archived messages it replaced (fetched with ?archived=true), muted and labelled, then hides them", async () => {
    const { user, requests } = setup(visible, (method, path) =>
      method === "GET" && path === "/api/sessions/s1?archived=true"
        ? { session: session(), agent: "build", messages: [...archive, summaryMessage("c1", "manual")] }
        : undefined,
    );
    const toggle = await screen.findByTestId("compaction-archive-toggle");
    expect(toggle).toHaveTextContent("Show the 4 archived messages");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryByTestId("archived-message")).not.toBeInTheDocument();
    expect(requests.some((r) => r.path.includes("archived"))).toBe(false);

    await user.click(toggle);
    const items = await screen.findAllByTestId("archived-message");
    expect(requests).toContainEqual({ method: "GET", path: "/api/sessions/s1?archived=true", body: undefined });
    // Only those this summary replaced, in order (not the older round's, not the retained tail).
    expect(items.map((i) => i.getAttribute("data-message-id"))).toEqual(["u1", "a1", "u2", "a2"]);
    for (const i of items) expect(within(i).getByText("archived")).toHaveClass("archived-label");
    expect(items[1]).toHaveTextContent("It describes a tiny project.");
    const region = screen.getByTestId("compaction-archive");
    expect(region).toHaveAttribute("aria-label", "Archived messages");
    expect(toggle).toHaveAttribute("aria-controls", region.id);
    expect(toggle).toHaveAttribute("aria-expanded", "true");
    expect(toggle).toHaveTextContent("Hide the 4 archived messages");
    // Archived messages are read, not forked from.
    expect(within(region).queryByTestId("message-menu")).not.toBeInTheDocument();
    // The retained tail is still shown once, outside the archive.
    expect(screen.getAllByText("What next?")).toHaveLength(1);

    // Collapsible again, from the keyboard.
    toggle.focus();
    await user.keyboard(" ");
    expect(toggle).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryByTestId("archived-message")).not.toBeInTheDocument();
    expect(toggle).toHaveTextContent("Show the 4 archived messages");
  });

  it("says when the archive cannot be loaded and tries again", async () => {
    let fail = true;
    const { user } = setup(visible, (method, path) => {
      if (method === "GET" && path === "/api/sessions/s1?archived=true") {
        if (fail) throw new ApiError(500, "database is locked");
        return { session: session(), agent: "build", messages: archive };
      }
      return undefined;
    });
    await user.click(await screen.findByTestId("compaction-archive-toggle"));
    const alert = await within(screen.getByTestId("compaction-archive")).findByRole("alert");
    expect(alert).toHaveTextContent("Could not load the archived messages: database is locked");
    fail = false;
    await user.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findAllByTestId("archived-message")).toHaveLength(4);
  });
});

const result: CompactResult = { compacted: 4, retained: 2, tokens_before: 12_400, tokens_after: 3_100, message_id: "c1" };

async function typeCommand(user: ReturnType<typeof userEvent.setup>, text: string) {
  const input = await screen.findByTestId("prompt-input");
  // Unsent text is kept per session between tests' inputs: start from an empty one.
  await user.clear(input);
  await user.keyboard(text);
  await user.keyboard("{Enter}");
}

describe("/compact", () => {
  it("is in Help", () => {
    render(<HelpText />);
    const listed = screen.getAllByText("/compact").map((c) => c.closest("li")).filter((li) => li !== null);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toHaveTextContent("Summarise the older messages now");
    expect(screen.getByRole("heading", { name: "Compaction" })).toBeInTheDocument();
  });

  it("is listed in the command menu with what it does", async () => {
    const { user } = setup(archive.slice(5));
    const input = await screen.findByTestId("prompt-input");
    await user.click(input);
    await user.keyboard("/comp");
    const option = within(screen.getByTestId("command-menu")).getByText("/compact").closest("[role='option']")!;
    expect(option).toHaveTextContent("Summarise the older messages now");
    expect(option).not.toHaveAttribute("aria-disabled");
    await user.clear(input);
  });

  it("compacts, says what it did, and loads the session as the store has it now", async () => {
    const { user, requests, loads, setDetail } = setup(archive.slice(1), (method, path) =>
      method === "POST" && path === "/api/sessions/s1/compact" ? result : undefined,
    );
    await screen.findByText("Read the README");
    const before = loads();
    setDetail({ messages: visible });
    await typeCommand(user, "/compact");
    await waitFor(() => expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/s1/compact", body: undefined }));
    expect(await screen.findByText("Compacted 4 messages into a summary. 2 recent messages retained.")).toBeInTheDocument();
    await waitFor(() => expect(loads()).toBeGreaterThan(before));
    expect(await screen.findByTestId("message-compaction")).toHaveTextContent("Compacted 4 messages");
    expect(screen.queryByText("Read the README")).not.toBeInTheDocument();
    // Nothing was sent to the model as a message.
    expect(requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
    expect(screen.queryByTestId("compaction-failed")).not.toBeInTheDocument();
  });

  it("shows the server's error text when there is nothing to compact", async () => {
    const { user } = setup([msg("u1", "user", "hi")], (method, path) => {
      if (method === "POST" && path === "/api/sessions/s1/compact")
        throw new ApiError(400, "there is nothing to compact yet: the session has fewer than two messages");
      return undefined;
    });
    await screen.findByText("hi");
    await typeCommand(user, "/compact");
    const alert = await screen.findByTestId("compaction-failed");
    expect(alert).toHaveAttribute("role", "alert");
    expect(alert).toHaveTextContent(
      "Could not compact the conversation: there is nothing to compact yet: the session has fewer than two messages",
    );
    expect(screen.queryByTestId("compacting")).not.toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Dismiss the compaction error" }));
    expect(screen.queryByTestId("compaction-failed")).not.toBeInTheDocument();
  });

  it("is greyed and explained while a turn runs, and does not call the server", async () => {
    const { user, requests } = setup(archive.slice(5), () => undefined, { running: true });
    const input = await screen.findByTestId("prompt-input");
    await waitFor(() => expect(screen.getByTestId("stop")).toBeInTheDocument());
    await user.clear(input);
    await user.keyboard("/compact");
    const option = within(screen.getByTestId("command-menu")).getByText("/compact").closest("[role='option']")!;
    expect(option).toHaveAttribute("aria-disabled", "true");
    expect(option).toHaveTextContent("a turn is running");
    await user.keyboard("{Enter}");
    expect(await screen.findByText(/A turn is running: \/compact works once it has finished/)).toBeInTheDocument();
    expect(requests.some((r) => r.path.endsWith("/compact"))).toBe(false);
  });
});

describe("a compaction as it happens", () => {
  it("shows 'Compacting the conversation…' from start to finish, then the marker", async () => {
    const { emit, loads, setDetail } = setup(archive.slice(1));
    await screen.findByText("Read the README");
    expect(screen.queryByTestId("compacting")).not.toBeInTheDocument();

    emit({ type: "session_updated", session: session({ status: "compacting" }) });
    const line = await screen.findByTestId("compacting");
    expect(line).toHaveAttribute("role", "status");
    expect(line).toHaveTextContent("Compacting the conversation…");
    emit({ type: "compaction_started", session_id: "s1", trigger: "tokens", tokens_before: 12_400 });
    await waitFor(() => expect(screen.getByTestId("compacting")).toHaveTextContent("automatically"));
    expect(screen.getByTestId("compacting")).toHaveTextContent("~12k tokens");
    expect(screen.getByTestId("running-indicator")).toHaveTextContent("Compacting");

    // Sending meanwhile is held back (the text stays in the input).
    const user = userEvent.setup();
    await user.click(screen.getByTestId("prompt-input"));
    await user.keyboard("go on{Enter}");
    expect(await screen.findByText(/being compacted: send your message once it has finished/)).toBeInTheDocument();
    expect(screen.getByTestId("prompt-input")).toHaveValue("go on");
    await user.clear(screen.getByTestId("prompt-input"));

    const before = loads();
    setDetail({ messages: [...visible.slice(0, 2), summaryMessage("c1", "tokens")] });
    emit({ type: "message_stored", message: summaryMessage("c1", "tokens") });
    emit({
      type: "compaction_finished",
      session_id: "s1",
      message_id: "c1",
      trigger: "tokens",
      compacted: 4,
      retained: 2,
      tokens_before: 12_400,
      tokens_after: 3_100,
    });
    emit({ type: "session_updated", session: session({ status: "idle" }) });
    await waitFor(() => expect(screen.queryByTestId("compacting")).not.toBeInTheDocument());
    expect(await screen.findByTestId("compaction-headline")).toHaveTextContent(
      "Compacted 4 messages · ~12k → ~3.1k tokens · automatically",
    );
    // The archived messages left the list (reloaded from the store).
    await waitFor(() => expect(loads()).toBeGreaterThan(before));
    await waitFor(() => expect(screen.queryByText("Read the README")).not.toBeInTheDocument());
  });

  it("shows compaction_failed as an error notice with what to do", async () => {
    const { emit } = setup(archive.slice(1));
    await screen.findByText("Read the README");
    emit({ type: "session_updated", session: session({ status: "compacting" }) });
    emit({ type: "compaction_started", session_id: "s1", trigger: "messages", tokens_before: 5_000 });
    expect(await screen.findByTestId("compacting")).toBeInTheDocument();
    emit({ type: "session_updated", session: session({ status: "busy" }) });
    emit({
      type: "compaction_failed",
      session_id: "s1",
      trigger: "messages",
      message: "compaction failed 2 times (overloaded); nothing was changed. Try /compact again later, fork from an earlier message, or start a new session",
    });
    const alert = await screen.findByTestId("compaction-failed");
    expect(alert).toHaveAttribute("role", "alert");
    expect(alert).toHaveTextContent("nothing was changed. Try /compact again later");
    expect(screen.queryByTestId("compacting")).not.toBeInTheDocument();
    // Other sessions' failures are not this one's.
    emit({ type: "compaction_failed", session_id: "other", trigger: "manual", message: "not ours" });
    expect(screen.queryByText(/not ours/)).not.toBeInTheDocument();
    // The messages are all still there.
    expect(screen.getByText("Read the README")).toBeInTheDocument();
  });
});
