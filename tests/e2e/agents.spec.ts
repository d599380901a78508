import { test, expect } from "@playwright/test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// The general subagent's system prompt (prompts/general.prompt.md) says this; the parent's does not.
const GENERAL = "a general-purpose subagent of mia-code";

// A delegation: the parent (build) calls `task` with the general subagent, which runs
// `touch child.txt`; the shell ask shows in the PARENT's view, is allowed once there (answered on
// the child's route), the child finishes, its card says completed, and the parent answers.
const delegation = {
  name: "delegate to the general subagent",
  steps: [
    {
      match: { system_contains: GENERAL, has_tool_result: "toolu_child_bash" },
      response: { usage: { input: 900, output: 20 }, events: [{ text: "Created child.txt in the project root." }] },
    },
    {
      match: { system_contains: GENERAL },
      response: {
        usage: { input: 800, output: 30 },
        events: [
          { text: "Creating the file." },
          {
            tool_call: {
              id: "toolu_child_bash",
              name: "bash",
              arguments: { command: "touch child.txt", description: "create child.txt" },
            },
          },
        ],
      },
    },
    {
      match: { has_tool_result: "toolu_task_1" },
      response: { usage: { input: 1500, output: 25 }, events: [{ text: "The general subagent created child.txt. All done." }] },
    },
    {
      match: { last_message_contains: "Delegate the chore" },
      response: {
        usage: { input: 1200, output: 40 },
        events: [
          { text: "I'll delegate this." },
          {
            tool_call: {
              id: "toolu_task_1",
              name: "task",
              arguments: {
                agent: "general",
                prompt: "Create an empty file child.txt in the project root with `touch child.txt`.",
                description: "Create child.txt",
              },
            },
          },
        ],
      },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("a delegation: the subagent's ask is answered in the parent, its card completes", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, delegation);
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Delegate the chore of creating child.txt");
  await page.getByTestId("prompt-input").press("Enter");

  // The task card appears and follows the child.
  const card = page.getByTestId("task-card");
  await expect(card).toBeVisible();
  await expect(card.getByTestId("task-agent")).toHaveText("general");
  await expect(card).toContainText("Create child.txt");

  // The child's shell ask shows in the parent's view, marked as a subagent's.
  const dialog = page.getByTestId("permission-dialog");
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("permission-meta")).toContainText("general (subagent) asks");
  await expect(dialog.getByTestId("permission-target")).toContainText("touch child.txt");
  await expect(card).toHaveAttribute("data-status", "blocked");
  await expect(card.getByTestId("task-blocked")).toContainText("touch child.txt");
  await shot(page, testInfo, "50-subagent-ask");
  expect(stack.read("child.txt")).toBeNull();
  const parentId = await page.locator(".session-item.active").getAttribute("data-session-id");
  const childId = await card.getAttribute("data-child-id");
  expect(childId).toBeTruthy();
  expect(childId).not.toBe(parentId);

  const answered = page.waitForRequest(
    (r) => r.method() === "POST" && r.url().includes(`/api/sessions/${childId}/permissions/`),
  );
  await dialog.getByTestId("permission-allow-once").click();
  await answered;
  await expect(dialog).toBeHidden();

  // The child runs the command and finishes; the card says so; the parent answers.
  await until("child.txt on disk", () => stack.read("child.txt") !== null);
  await expect(card).toHaveAttribute("data-status", "completed");
  await expect(card.getByTestId("task-status")).toHaveText("completed");
  await expect(card.getByTestId("task-duration")).toBeVisible();
  await expect(page.getByTestId("message-assistant").last()).toContainText("created child.txt. All done.");
  await expect(page.getByTestId("stop")).toBeHidden();

  // Opened, the card shows the child's steps and tool call, and its answer.
  const toggle = card.getByTestId("task-toggle");
  if ((await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
  const tool = card.getByTestId("task-child-tool");
  await expect(tool).toHaveAttribute("data-tool", "bash");
  await expect(tool).toHaveAttribute("data-status", "ok");
  await expect(tool).toContainText("touch child.txt");
  await expect(tool).toContainText("allowed once by you");
  await expect(card.getByTestId("task-answer")).toContainText("Created child.txt in the project root.");
  await expect(card.getByTestId("task-figures")).toContainText("2 steps");
  await shot(page, testInfo, "51-subagent-card");

  // /cost counts the subagent's session too.
  await page.getByTestId("prompt-input").fill("/cost");
  await page.getByTestId("prompt-input").press("Escape");
  await page.getByTestId("prompt-input").press("Enter");
  const cost = page.getByTestId("panel-cost");
  await expect(cost.getByTestId("cost-line")).toHaveCount(2);
  await expect(cost.getByTestId("cost-line").filter({ hasText: "general" })).toBeVisible();
  await expect(cost.getByTestId("cost-total")).toContainText("Total with 1 subagent session");
  await shot(page, testInfo, "52-cost");

  // The model picker lists the configured provider's models with window and price.
  await page.getByTestId("model-button").click();
  const picker = page.getByTestId("model-picker");
  await expect(picker.getByTestId("model-option").first()).toContainText("Default");
  await expect(picker.locator('[data-testid="model-option"][data-model^="anthropic/"]').first()).toContainText(
    /context · \$[\d.]+ \/ \$[\d.]+ per M tokens/,
  );
  await shot(page, testInfo, "55-model-picker");
  await picker.getByTestId("model-filter").press("Escape");
  await expect(picker).toBeHidden();

  // The child is nested under its parent in the sidebar, and opens as a session linking back.
  await expect(page.locator(`[data-testid="session-item"][data-session-id="${childId}"]`)).toHaveCount(0);
  await card.getByTestId("task-open-session").click();
  await expect(page.getByTestId("subagent-of")).toContainText("subagent general of");
  const childItem = page.locator(`[data-testid="session-item"][data-session-id="${childId}"]`);
  await expect(childItem).toHaveAttribute("data-spawned", "true");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Created child.txt in the project root.");
  await page.getByTestId("subagent-parent-link").click();
  await expect(page.locator(".session-item.active")).toHaveAttribute("data-session-id", parentId!);
  await expect(page.getByTestId("task-card")).toHaveAttribute("data-status", "completed");
});

// The agent generator: describe → preview → refine (what changed) → save to the project → the
// file is written and the agent is offered in the @ list at once.
const generated = {
  key: "test-runner",
  name: "Test runner",
  description: "Runs the project's tests and reports failures.",
  mode: "subagent",
  model: null,
  model_reason: "Running tests needs no strong model: the session's is fine.",
  prompt: "You run the project's tests.\nReport each failing test with its message.\nDo not change any file.",
  permissions: [
    { permission: "read", action: "allow", reason: "It reads test files to explain failures." },
    { permission: "edit", action: "deny", reason: "It only reports; it never changes code." },
  ],
};
const generator = {
  name: "generate an agent",
  steps: [
    {
      match: { system_contains: "agent generator", last_message_contains: "also allow running the tests" },
      response: {
        events: [
          {
            text: JSON.stringify({
              permissions: [
                ...generated.permissions,
                { permission: "bash", pattern: "npm test*", action: "ask", reason: "Running the tests is its job." },
              ],
              prompt: "You run the project's tests with `npm test`.\nReport each failing test with its message.\nDo not change any file.",
            }),
          },
        ],
      },
    },
    {
      match: { system_contains: "agent generator" },
      response: { chunk_delay_ms: 400, events: [{ text: JSON.stringify(generated) }] },
    },
  ],
};

test("/agent create: generate, refine, save; the agent is offered at once", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, generator);
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("/agent create runs the tests and reports failures, never edits");
  await input.press("Enter");
  const dialog = page.getByTestId("agent-create");
  await expect(dialog.getByTestId("agent-description")).toHaveValue("runs the tests and reports failures, never edits");
  await dialog.getByTestId("agent-generate").click();
  await expect(dialog.getByTestId("agent-progress")).toBeVisible();
  const preview = dialog.getByTestId("agent-preview");
  await expect(preview.getByTestId("agent-key")).toHaveText("test-runner");
  await expect(preview.getByTestId("agent-rule")).toHaveCount(2);
  await expect(preview.getByTestId("agent-prompt")).toContainText("Do not change any file.");
  await shot(page, testInfo, "53-agent-create-preview");

  await dialog.getByTestId("agent-refine").click();
  await dialog.getByTestId("agent-refine-input").fill("also allow running the tests");
  await dialog.getByTestId("agent-refine-send").click();
  const changes = dialog.getByTestId("agent-changes");
  await expect(changes.getByTestId("agent-change")).toHaveCount(2);
  await expect(changes.locator('[data-field="permissions"] [data-diff="add"]')).toContainText("bash npm test*");
  await expect(changes.locator('[data-field="prompt"] [data-diff="add"]')).toContainText("npm test");
  await expect(preview.getByTestId("agent-rule")).toHaveCount(3);
  await shot(page, testInfo, "54-agent-create-refined");

  await dialog.getByTestId("agent-save-project").click();
  await expect(dialog.getByTestId("agent-saved")).toContainText(".mia-code/agents/test-runner.md");
  const file = join(stack.project, ".mia-code/agents/test-runner.md");
  await until("the agent file", () => existsSync(file));
  expect(readFileSync(file, "utf8")).toContain("npm test");
  await dialog.getByTestId("agent-saved").getByRole("button", { name: "Close" }).click();

  await input.fill("@test");
  await expect(page.getByTestId("mention-agent")).toContainText("@test-runner");
});
