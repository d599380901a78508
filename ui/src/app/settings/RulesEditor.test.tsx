import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { RuleView } from "../../protocol/generated";
import { Settings } from "../Settings";
import { fakeTransport, Providers } from "../testing";
import { ownRules } from "./RulesEditor";

const GLOBAL = "/h/.config/mia-code/config.json";
const RULES: RuleView[] = [
  { permission: "read", pattern: "*.env", action: "deny", layer: "invariant", source: "built-in #1" },
  { permission: "write", pattern: "src/*", action: "allow", layer: "project", source: "/p/mia-code.json #1" },
  { permission: "bash", pattern: "npm test", action: "allow", layer: "global", source: `${GLOBAL} #2` },
  { permission: "bash", pattern: "git status *", action: "allow", layer: "global", source: `${GLOBAL} #1` },
  { permission: "webfetch", pattern: null, action: "ask", layer: "global", source: "/h/.mia-code.json #1" },
  { permission: "edit", pattern: "*", action: "ask", layer: "default", source: "built-in #3" },
];

function setup() {
  const fake = fakeTransport((method, path) => {
    if (path.startsWith("/api/settings"))
      return { agents: [{ name: "build", mode: "primary" }], default_agent: "build", providers: [], global_config: GLOBAL, config_files: [] };
    if (path.startsWith("/api/permissions")) return { agent: "build", rules: RULES, trusted: true, warnings: [] };
    if (path.startsWith("/api/approvals")) return [];
    if (path.startsWith("/api/mcp") || path.startsWith("/api/plugins") || path.startsWith("/api/shares")) return [];
    void method;
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <Settings directory="/p" onClose={() => undefined} />
    </Providers>,
  );
  return fake;
}

describe("the permission-rules editor", () => {
  it("takes the global config's own rules in their written order", () => {
    expect(ownRules(RULES, GLOBAL)).toEqual([
      { permission: "bash", pattern: "git status *", action: "allow" },
      { permission: "bash", pattern: "npm test", action: "allow" },
    ]);
  });

  it("adds, edits, reorders and deletes your rules, then saves the list to the global config", async () => {
    const fake = setup();
    const editor = await screen.findByTestId("rules-editor");
    await waitFor(() => expect(within(editor).getAllByTestId("my-rule")).toHaveLength(2));
    const patterns = () => within(editor).getAllByTestId<HTMLInputElement>("my-rule-pattern").map((i) => i.value);
    expect(patterns()).toEqual(["git status *", "npm test"]);
    expect(within(editor).getByTestId("my-rules-save")).toBeDisabled();

    // Move the second up, edit its action, add one, delete the (now) second.
    fireEvent.click(within(editor).getByRole("button", { name: "Move rule 2 up" }));
    expect(patterns()).toEqual(["npm test", "git status *"]);
    fireEvent.change(within(editor).getAllByTestId("my-rule-action")[0]!, { target: { value: "deny" } });
    fireEvent.click(within(editor).getByTestId("my-rule-add"));
    const rows = within(editor).getAllByTestId("my-rule");
    expect(rows).toHaveLength(3);
    fireEvent.change(within(rows[2]!).getByTestId("my-rule-permission"), { target: { value: "write" } });
    fireEvent.change(within(rows[2]!).getByTestId("my-rule-pattern"), { target: { value: "*.lock" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Delete rule 2" }));
    expect(patterns()).toEqual(["npm test", "*.lock"]);

    fireEvent.click(within(editor).getByTestId("my-rules-save"));
    await waitFor(() => expect(fake.requests.some((r) => r.method === "PUT" && r.path === "/api/settings")).toBe(true));
    const put = fake.requests.find((r) => r.method === "PUT" && r.path === "/api/settings")!;
    expect(put.body).toEqual({
      permissions: [
        { permission: "bash", pattern: "npm test", action: "deny" },
        { permission: "write", pattern: "*.lock", action: "ask" },
      ],
    });
  });

  it("discarding goes back to the saved rules", async () => {
    setup();
    const editor = await screen.findByTestId("rules-editor");
    await waitFor(() => expect(within(editor).getAllByTestId("my-rule")).toHaveLength(2));
    fireEvent.click(within(editor).getByRole("button", { name: "Delete rule 1" }));
    expect(within(editor).getAllByTestId("my-rule")).toHaveLength(1);
    fireEvent.click(within(editor).getByTestId("my-rules-discard"));
    expect(within(editor).getAllByTestId("my-rule")).toHaveLength(2);
  });

  it("lists every compiled rule with its layer and source, yours marked", async () => {
    setup();
    const table = await screen.findByTestId("rules-table");
    const rows = await within(table).findAllByRole("row");
    expect(rows).toHaveLength(RULES.length + 1);
    expect(rows[1]).toHaveTextContent("built-in #1");
    expect(rows[2]).toHaveTextContent("/p/mia-code.json #1");
    expect(rows[3]).toHaveTextContent("yours");
    expect(rows[5]).not.toHaveTextContent("yours");
  });

  it("has a section list that marks the section it scrolls to", async () => {
    setup();
    const nav = await screen.findByTestId("settings-nav");
    await within(nav).findByTestId("settings-nav-permissions");
    expect(within(nav).getByTestId("settings-nav-appearance")).toHaveAttribute("aria-current", "true");
    fireEvent.click(within(nav).getByTestId("settings-nav-permissions"));
    expect(within(nav).getByTestId("settings-nav-permissions")).toHaveAttribute("aria-current", "true");
    expect(within(nav).getByTestId("settings-nav-appearance")).not.toHaveAttribute("aria-current");
  });
});
