import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AgentInfo, CostView, Message, ModelChoice, Session, SessionDetail } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { SessionView } from "./SessionView";
import { HelpText } from "./Help";
import { fakeTransport, Providers, type Handler } from "./testing";
import { priceText } from "./ModelPicker";

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

const answer = (model: string, source: string): Message => ({
  id: "a1",
  session_id: "s1",
  role: "assistant",
  type: "normal",
  created_at: 2,
  metadata: { agent: "build", model, model_source: source, tokens: { input: 100, output: 20 }, cost_usd: 0.001 },
  parts: [{ id: "a1-0", message_id: "a1", index: 0, created_at: 2, content: { type: "text", text: "Done." } }],
});

const MODELS: ModelChoice[] = [
  {
    id: "anthropic/claude-sonnet-4-5",
    provider: "anthropic",
    context_window: 200_000,
    max_output: 64_000,
    input_price: 3,
    output_price: 15,
    reasoning: true,
  },
  {
    id: "anthropic/claude-haiku-4-5",
    provider: "anthropic",
    context_window: 200_000,
    max_output: 64_000,
    input_price: 1,
    output_price: 5,
    reasoning: false,
  },
];

const line = (agent: string, model: string, cost: number, requests = 1) => ({
  agent,
  model,
  requests,
  input_tokens: 1200 * requests,
  output_tokens: 300 * requests,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: cost,
});

const COST: CostView = {
  session_id: "s1",
  lines: [line("build", "anthropic/claude-sonnet-4-5", 0.0123, 2), line("explore", "anthropic/claude-haiku-4-5", 0.0021)],
  session: line("", "", 0.0123, 2),
  total: line("", "", 0.0144, 3),
  subagent_sessions: ["0198c0de-0000-7000-8000-000000000001"],
};

function setup(extra?: Handler, agents: AgentInfo[] = [], messages: Message[] = []) {
  const detail: SessionDetail = { session: session(), agent: "build", messages };
  const fake = fakeTransport((method, path, body) => {
    const r = extra?.(method, path, body);
    if (r !== undefined) return r;
    if (method === "GET" && path === "/api/sessions/s1") return detail;
    if (path.endsWith("/timeline")) return [];
    if (method === "GET" && path.startsWith("/api/models")) return MODELS;
    if (method === "GET" && path === "/api/sessions/s1/cost") return COST;
    if (method === "POST" && path === "/api/sessions/s1/model") {
      // As the runtime does: the pick is kept per agent.
      const m = (body as { model?: string }).model;
      return session({ agent_models: m ? { build: m } : {} });
    }
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <SessionView
        sessionId="s1"
        directory="/p"
        agents={agents}
        onNewSession={() => undefined}
        onSessionsChanged={() => undefined}
      />
    </Providers>,
  );
  return { ...fake, user: userEvent.setup() };
}

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

async function command(user: ReturnType<typeof userEvent.setup>, text: string) {
  const input = screen.getByTestId("prompt-input");
  await user.click(input);
  await user.type(input, text);
  await user.keyboard("{Escape}{Enter}");
}

describe("/cost", () => {
  it("opens the cost panel with a line per agent and model and the totals", async () => {
    const { user, requests } = setup();
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await command(user, "/cost");
    const panel = await screen.findByTestId("panel-cost");
    expect(screen.getByTestId("tab-cost")).toHaveAttribute("aria-selected", "true");
    const lines = await within(panel).findAllByTestId("cost-line");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toHaveTextContent("build");
    expect(lines[0]).toHaveTextContent("anthropic/claude-sonnet-4-5");
    expect(lines[0]).toHaveTextContent("$0.0123");
    expect(lines[1]).toHaveTextContent("explore");
    expect(lines[1]).toHaveTextContent("claude-haiku-4-5");
    expect(lines[1]).toHaveTextContent("$0.0021");
    expect(within(panel).getByTestId("cost-session")).toHaveTextContent("This session");
    expect(within(panel).getByTestId("cost-session")).toHaveTextContent("$0.0123");
    expect(within(panel).getByTestId("cost-total")).toHaveTextContent("Total with 1 subagent session");
    expect(within(panel).getByTestId("cost-total")).toHaveTextContent("$0.0144");
    expect(within(panel).getByTestId("cost-total")).toHaveTextContent("3.6k");
    // The message was not sent to the model.
    expect(requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
  });

  it("opens from the session total in the header and shows a failure's text", async () => {
    const { user } = setup((method, path) => {
      if (path === "/api/sessions/s1/cost") throw new ApiError(404, "no such session");
      return undefined;
    });
    await user.click(await screen.findByTestId("session-cost"));
    expect(await screen.findByText("Could not load the cost: no such session")).toBeInTheDocument();
  });
});

describe("the model picker", () => {
  it("lists the models with context window and price, and choosing one sets the session's model", async () => {
    const { user, requests } = setup();
    const button = await screen.findByTestId("model-button");
    expect(button).toHaveAttribute("aria-expanded", "false");
    await user.click(button);
    const picker = await screen.findByTestId("model-picker");
    expect(button).toHaveAttribute("aria-expanded", "true");
    const input = within(picker).getByRole("textbox", { name: "Model" });
    expect(input).toHaveFocus();
    expect(input).toHaveAttribute("aria-autocomplete", "list");
    await waitFor(() => expect(within(picker).getAllByRole("option")).toHaveLength(3));
    const options = within(picker).getAllByRole("option");
    expect(options[0]).toHaveTextContent("Default");
    expect(options[1]).toHaveTextContent("anthropic/claude-sonnet-4-5");
    expect(options[1]).toHaveTextContent("200k context");
    expect(options[1]).toHaveTextContent("$3 / $15 per M tokens");
    expect(options[2]).toHaveTextContent("$1 / $5 per M tokens");
    // Filter, move with the keys, Enter picks.
    await user.type(input, "haiku");
    expect(within(picker).getAllByRole("option")).toHaveLength(1);
    await waitFor(() => expect(input).toHaveAttribute("aria-activedescendant", within(picker).getByRole("option").id));
    await user.keyboard("{Enter}");
    await waitFor(() =>
      expect(requests.find((r) => r.method === "POST" && r.path === "/api/sessions/s1/model")?.body).toEqual({
        model: "anthropic/claude-haiku-4-5",
      }),
    );
    await waitFor(() => expect(screen.queryByTestId("model-picker")).not.toBeInTheDocument());
    expect(screen.getByTestId("model-button")).toHaveTextContent("anthropic/claude-haiku-4-5");
  });

  it("the arrows move through the models while the field keeps the focus; Enter picks the current one, Escape closes", async () => {
    const { user, requests } = setup();
    await user.click(await screen.findByTestId("model-button"));
    const picker = await screen.findByTestId("model-picker");
    await waitFor(() => expect(within(picker).getAllByRole("option")).toHaveLength(3));
    const input = within(picker).getByRole("textbox", { name: "Model" });
    const options = within(picker).getAllByRole("option");
    await user.keyboard("{ArrowDown}");
    await waitFor(() => expect(input).toHaveAttribute("aria-activedescendant", options[0]!.id));
    await user.keyboard("{ArrowDown}");
    await waitFor(() => expect(input).toHaveAttribute("aria-activedescendant", options[1]!.id));
    expect(input).toHaveFocus();
    await user.keyboard("{Enter}");
    await waitFor(() =>
      expect(requests.find((r) => r.method === "POST" && r.path === "/api/sessions/s1/model")?.body).toEqual({
        model: "anthropic/claude-sonnet-4-5",
      }),
    );
    await user.click(await screen.findByTestId("model-button"));
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("model-picker")).not.toBeInTheDocument());
  });

  it("shows the server's error and stays open when a model is refused", async () => {
    const { user } = setup((method, path) => {
      if (method === "POST" && path === "/api/sessions/s1/model")
        throw new ApiError(400, "unknown provider `nope` in model `nope/x`: configured providers are anthropic");
      return undefined;
    });
    await user.click(await screen.findByTestId("model-button"));
    const picker = await screen.findByTestId("model-picker");
    await waitFor(() => expect(within(picker).getAllByRole("option").length).toBeGreaterThan(1));
    await user.type(within(picker).getByRole("textbox", { name: "Model" }), "nope/x");
    // A reference not in the list can still be tried.
    const option = within(picker).getByRole("option");
    expect(option).toHaveTextContent("nope/x");
    await user.keyboard("{Enter}");
    expect(await within(picker).findByTestId("model-error")).toHaveTextContent("unknown provider `nope`");
    expect(screen.getByTestId("model-picker")).toBeInTheDocument();
  });

  it("Default goes back to the configured model (an empty body)", async () => {
    const { user, requests } = setup();
    await user.click(await screen.findByTestId("model-button"));
    const picker = await screen.findByTestId("model-picker");
    await user.click(within(picker).getAllByRole("option")[0]!);
    await waitFor(() =>
      expect(requests.find((r) => r.method === "POST" && r.path === "/api/sessions/s1/model")?.body).toEqual({}),
    );
  });

  it("a picked model comes before the agent's own and says so", async () => {
    const { user } = setup(undefined, [
      { name: "build", description: "Builds", mode: "primary", builtin: true, read_only: false, model: "anthropic/claude-opus-4" },
    ]);
    await user.click(await screen.findByTestId("model-button"));
    const picker = await screen.findByTestId("model-picker");
    const options = within(picker).getAllByRole("option");
    await user.click(options[options.length - 1]!);
    const button = await screen.findByTestId("model-button");
    await waitFor(() => expect(button).toHaveTextContent("(picked)"));
    expect(button.title).toContain("Picked for build");
  });

  it("shows the agent's own model when nothing was picked", async () => {
    setup(undefined, [
      { name: "build", description: "Builds", mode: "primary", builtin: true, read_only: false, model: "anthropic/claude-opus-4" },
    ]);
    const button = await screen.findByTestId("model-button");
    expect(button).toHaveTextContent("anthropic/claude-opus-4");
    expect(button.title).toContain("build's own model");
  });
});

describe("/model", () => {
  it("/model provider/model sets it at once; an error shows the server's text", async () => {
    let fail = false;
    const { user, requests } = setup((method, path) => {
      if (method === "POST" && path === "/api/sessions/s1/model" && fail) throw new ApiError(400, "not a model reference: `bad`");
      return undefined;
    });
    await waitFor(() => expect(requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await command(user, "/model anthropic/claude-sonnet-4-5");
    await waitFor(() =>
      expect(requests.find((r) => r.path === "/api/sessions/s1/model")?.body).toEqual({ model: "anthropic/claude-sonnet-4-5" }),
    );
    expect(requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
    expect(await screen.findByText("Model for this session: anthropic/claude-sonnet-4-5")).toBeInTheDocument();
    fail = true;
    await command(user, "/model bad");
    expect(await screen.findByText("/model bad: not a model reference: `bad`")).toBeInTheDocument();
  });

  it("/model alone opens the picker", async () => {
    const { user } = setup();
    await screen.findByTestId("model-button");
    await command(user, "/model");
    // Under a loaded CI machine the picker can take longer than findBy's default second.
    expect(await screen.findByTestId("model-picker", undefined, { timeout: 5000 })).toBeInTheDocument();
  });

  it("a message's model says where it came from", async () => {
    setup(undefined, [], [answer("anthropic/claude-haiku-4-5", "session")]);
    const model = await screen.findByTestId("message-model");
    expect(model).toHaveTextContent("anthropic/claude-haiku-4-5");
    expect(model.title).toBe("Model anthropic/claude-haiku-4-5: the session's model (/model)");
  });

  it("Help lists /model, /cost and /agent create", () => {
    render(<HelpText />);
    expect(screen.getByText("/model [provider/model | default]")).toBeInTheDocument();
    expect(screen.getAllByText("/cost").length).toBeGreaterThan(0);
    expect(screen.getByText("/agent create [description]")).toBeInTheDocument();
  });

  it("prices read as dollars per million tokens", () => {
    expect(priceText({ input_price: 0.8, output_price: 4 })).toBe("$0.8 / $4 per M tokens");
    expect(priceText({ input_price: 0.075, output_price: 0.3 })).toBe("$0.075 / $0.3 per M tokens");
  });
});
