import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AgentInfo, AgentProposal, SessionSummary } from "../protocol/generated";
import { ApiError } from "../transport/types";
import { App } from "./App";
import { AgentCreate } from "./AgentCreate";
import { Settings } from "./Settings";
import { fakePlatform, fakeTransport, Providers, type Handler } from "./testing";
import { lineDiff } from "../lib/lineDiff";

const PROPOSAL: AgentProposal = {
  key: "security-reviewer",
  name: "Security reviewer",
  description: "Reviews changes for security problems and reports them.",
  mode: "subagent",
  model: "anthropic/claude-sonnet-4-5",
  model_reason: "A balanced model for careful reviews.",
  prompt: "You review code for security problems.\nReport each finding with its file and line.\nNever edit files.",
  permissions: [
    { permission: "read", action: "allow", reason: "It reads the code it reviews." },
    { permission: "edit", action: "deny", reason: "A reviewer does not change code." },
  ],
  notes: ["The key security-review was taken: renamed to security-reviewer."],
  changed: [],
};

const REFINED: AgentProposal = {
  ...PROPOSAL,
  prompt: "You review code for security problems.\nReport each finding with its file and line.\nRun the tests to confirm a finding.\nNever edit files.",
  permissions: [
    ...PROPOSAL.permissions,
    { permission: "bash", pattern: "npm test*", action: "allow", reason: "Running the tests confirms a finding." },
  ],
  notes: [],
  changed: ["permissions", "prompt"],
};

const BUILD: AgentInfo = { name: "build", description: "Builds", mode: "primary", builtin: true, read_only: false };
const NEW_AGENT: AgentInfo = {
  name: "security-reviewer",
  description: PROPOSAL.description,
  mode: "subagent",
  builtin: false,
  read_only: true,
  source: "/proj/.mia-code/agents/security-reviewer.md",
};

function renderDialog(handler: Handler) {
  const fake = fakeTransport(handler);
  const onSaved = vi.fn();
  const onClose = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <AgentCreate directory="/proj" agent="build" onClose={onClose} onSaved={onSaved} />
    </Providers>,
  );
  return { ...fake, onSaved, onClose, user: userEvent.setup() };
}

describe("/agent create", () => {
  it("generates, previews, refines (showing what changed), saves, and the new agent is usable at once", async () => {
    const summary: SessionSummary = {
      id: "s1",
      title: "Session 1",
      slug: "s-1",
      directory: "/proj",
      project_id: "p",
      status: "idle",
      created_at: 1,
      updated_at: Date.now(),
      version: "0.1",
      message_count: 0,
    };
    let saved = false;
    let release: () => void = () => undefined;
    const generating = new Promise<void>((r) => (release = r));
    const fake = fakeTransport(async (method, path, body) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (method === "GET" && path.startsWith("/api/sessions?")) return [summary];
      if (method === "GET" && path === "/api/sessions/s1") return { session: summary, agent: "build", messages: [] };
      if (path.endsWith("/timeline")) return [];
      if (path.startsWith("/api/files")) return ["README.md"];
      if (method === "GET" && path.startsWith("/api/agents")) return saved ? [BUILD, NEW_AGENT] : [BUILD];
      if (method === "POST" && path === "/api/agents/propose") {
        const b = body as { refine?: string };
        if (b.refine) return REFINED;
        await generating;
        return PROPOSAL;
      }
      if (method === "POST" && path === "/api/agents/save") {
        saved = true;
        return { path: "/proj/.mia-code/agents/security-reviewer.md", proposal: (body as { proposal: AgentProposal }).proposal };
      }
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    const user = userEvent.setup();
    await waitFor(() => expect(fake.requests.some((r) => r.path === "/api/sessions/s1")).toBe(true));
    await screen.findByTestId("session-title");
    const input = screen.getByTestId("prompt-input");
    await user.click(input);
    await user.type(input, "/agent create reviews changes for security problems");
    await user.keyboard("{Enter}");

    const dialog = await screen.findByTestId("agent-create");
    expect(within(dialog).getByTestId("agent-description")).toHaveValue("reviews changes for security problems");
    expect(fake.requests.some((r) => r.path.endsWith("/messages"))).toBe(false);
    await user.click(within(dialog).getByTestId("agent-generate"));
    expect(await within(dialog).findByTestId("agent-progress")).toHaveTextContent("Generating the agent");
    expect(fake.requests.find((r) => r.path === "/api/agents/propose")?.body).toEqual({
      directory: "/proj",
      description: "reviews changes for security problems",
      agent: "build",
    });
    release();

    // The preview: every field, each rule with its reason, the prompt in full, the notes.
    const preview = await within(dialog).findByTestId("agent-preview");
    expect(within(preview).getByTestId("agent-key")).toHaveTextContent("security-reviewer");
    expect(within(preview).getByTestId("agent-name")).toHaveTextContent("Security reviewer");
    expect(within(preview).getByTestId("agent-mode")).toHaveTextContent("subagent");
    expect(within(preview).getByTestId("agent-model")).toHaveTextContent("anthropic/claude-sonnet-4-5");
    expect(within(preview).getByTestId("agent-model")).toHaveTextContent("A balanced model for careful reviews.");
    const rules = within(preview).getAllByTestId("agent-rule");
    expect(rules).toHaveLength(2);
    expect(rules[1]).toHaveTextContent("edit");
    expect(rules[1]).toHaveTextContent("deny");
    expect(rules[1]).toHaveTextContent("A reviewer does not change code.");
    expect(within(preview).getByTestId("agent-prompt").textContent).toBe(PROPOSAL.prompt);
    expect(within(dialog).getByTestId("agent-notes")).toHaveTextContent("renamed to security-reviewer");

    // Refine: what changed, before and after.
    await user.click(within(dialog).getByTestId("agent-refine"));
    await user.type(within(dialog).getByTestId("agent-refine-input"), "also allow running the tests");
    await user.click(within(dialog).getByTestId("agent-refine-send"));
    const changes = await within(dialog).findByTestId("agent-changes");
    const fields = within(changes).getAllByTestId("agent-change");
    expect(fields.map((f) => f.getAttribute("data-field"))).toEqual(["permissions", "prompt"]);
    const added = fields.map((f) => [...f.querySelectorAll("[data-diff='add']")].map((e) => e.textContent));
    expect(added[0]!.join("\n")).toContain("allow bash npm test* — Running the tests confirms a finding.");
    expect(added[1]!.join("\n")).toContain("Run the tests to confirm a finding.");
    expect(fields[1]!.querySelectorAll("[data-diff='del']")).toHaveLength(0);
    const refineRequest = fake.requests.filter((r) => r.path === "/api/agents/propose")[1];
    expect(refineRequest?.body).toMatchObject({ directory: "/proj", refine: "also allow running the tests", previous: { key: "security-reviewer" } });
    expect(within(dialog).getAllByTestId("agent-rule")).toHaveLength(3);

    // Save to the project: the proposal as shown is posted.
    await user.click(within(dialog).getByTestId("agent-save-project"));
    expect(await within(dialog).findByTestId("agent-saved")).toHaveTextContent("/proj/.mia-code/agents/security-reviewer.md");
    const save = fake.requests.find((r) => r.path === "/api/agents/save");
    expect(save?.body).toMatchObject({ directory: "/proj", to: "project", agent: "build" });
    expect((save?.body as { proposal: AgentProposal }).proposal.permissions).toHaveLength(3);
    expect((save?.body as { proposal: AgentProposal }).proposal.prompt).toBe(REFINED.prompt);

    // The agents load again: @ offers the new one.
    await waitFor(() => expect(fake.requests.filter((r) => r.path.startsWith("/api/agents?")).length).toBe(2));
    await user.click(within(within(dialog).getByTestId("agent-saved")).getByRole("button", { name: "Close" }));
    await user.click(input);
    await user.type(input, "@sec");
    const option = await screen.findByTestId("mention-agent");
    expect(option).toHaveTextContent("@security-reviewer");
    await user.keyboard("{Enter}");
    expect(input).toHaveValue("@security-reviewer ");
  });

  it("shows the server's error when saving is refused, and edits go into what is saved", async () => {
    let refuse = true;
    const { user, requests, onSaved } = renderDialog((method, path) => {
      if (path === "/api/agents/propose") return PROPOSAL;
      if (path.startsWith("/api/models")) return [];
      if (path === "/api/agents/save") {
        if (refuse) throw new ApiError(400, "the rule `allow bash *` is broader than the agent creating it (build asks for bash)");
        return { path: "/h/.config/mia-code/agents/security-reviewer.md", proposal: PROPOSAL };
      }
      return undefined;
    });
    await user.type(screen.getByTestId("agent-description"), "reviews security");
    await user.click(screen.getByTestId("agent-generate"));
    await screen.findByTestId("agent-preview");
    await user.click(screen.getByTestId("agent-save-global"));
    expect(await screen.findByTestId("agent-error")).toHaveTextContent(
      "the rule `allow bash *` is broader than the agent creating it (build asks for bash)",
    );
    expect(onSaved).not.toHaveBeenCalled();
    expect(screen.getByTestId("agent-preview")).toBeInTheDocument();

    // Edit: the mode and the prompt, a rule removed.
    await user.click(screen.getByTestId("agent-edit"));
    const editor = screen.getByTestId("agent-editor");
    await user.selectOptions(within(editor).getByTestId("agent-edit-mode"), "all");
    const prompt = within(editor).getByTestId("agent-edit-prompt");
    await user.clear(prompt);
    await user.type(prompt, "Review carefully.");
    await user.click(within(editor).getByRole("button", { name: "Remove rule 2" }));
    refuse = false;
    await user.click(screen.getByTestId("agent-save-global"));
    await screen.findByTestId("agent-saved");
    const body = requests.filter((r) => r.path === "/api/agents/save")[1]?.body as { proposal: AgentProposal; to: string };
    expect(body.to).toBe("global");
    expect(body.proposal).toMatchObject({ mode: "all", prompt: "Review carefully." });
    expect(body.proposal.permissions.map((r) => r.permission)).toEqual(["read"]);
    expect(onSaved).toHaveBeenCalledTimes(1);
  });

  it("shows a generation failure and keeps the description", async () => {
    const { user } = renderDialog((_m, path) => {
      if (path === "/api/agents/propose") throw new ApiError(400, "the agent generator did not answer with a JSON object");
      return undefined;
    });
    await user.type(screen.getByTestId("agent-description"), "something");
    await user.click(screen.getByTestId("agent-generate"));
    expect(await screen.findByTestId("agent-error")).toHaveTextContent("did not answer with a JSON object");
    expect(screen.getByTestId("agent-description")).toHaveValue("something");
  });

  it("Settings lists the agents with where they come from, and opens the generator", async () => {
    const fake = fakeTransport((_m, path) => {
      if (path.startsWith("/api/settings"))
        return {
          agents: [BUILD, NEW_AGENT],
          default_agent: "build",
          providers: [],
          global_config: "/h/config.json",
          config_files: [],
        };
      if (path.startsWith("/api/permissions")) return { agent: "build", rules: [], trusted: true, warnings: [] };
      if (path.startsWith("/api/approvals")) return [];
      return undefined;
    });
    const onCreate = vi.fn();
    render(
      <Providers transport={fake.transport}>
        <Settings directory="/proj" onClose={() => undefined} onCreateAgent={onCreate} />
      </Providers>,
    );
    const rows = await screen.findAllByTestId("settings-agent");
    expect(rows[1]).toHaveTextContent("security-reviewer");
    expect(rows[1]).toHaveTextContent("/proj/.mia-code/agents/security-reviewer.md");
    await userEvent.setup().click(screen.getByTestId("settings-create-agent"));
    expect(onCreate).toHaveBeenCalled();
  });

  it("diffs lines", () => {
    expect(lineDiff("a\nb\nc", "a\nx\nc")).toEqual([
      { type: "same", text: "a" },
      { type: "del", text: "b" },
      { type: "add", text: "x" },
      { type: "same", text: "c" },
    ]);
    expect(lineDiff("", "new")).toEqual([{ type: "add", text: "new" }]);
  });
});
