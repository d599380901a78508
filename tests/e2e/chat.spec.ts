import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

// prompt → streamed answer → tool card; the session appears in the sidebar.
const scenario = {
  name: "read the README",
  steps: [
    {
      match: { last_message_contains: "Summarise the README" },
      response: {
        usage: { input: 1200, output: 40 },
        chunk_delay_ms: 20,
        events: [
          { reasoning: "The user wants a summary; read the file first." },
          { text: "Let me read " },
          { text: "the README first." },
          { tool_call: { id: "toolu_read_1", name: "read", arguments: { path: "README.md" }, chunks: 3 } },
        ],
      },
    },
    {
      match: { has_tool_result: "toolu_read_1" },
      response: {
        usage: { input: 1500, output: 60 },
        chunk_delay_ms: 20,
        events: [
          { text: "The README describes a **tiny sample project**" },
          { text: " for trying mia-code.\n\n" },
          { text: "```ts\nconst answer = 42;\n```\n" },
          { text: "🧠 Mia: the project has one source file.\n🌸 Miette: small and friendly.\n" },
        ],
      },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("a prompt streams an answer and shows the tool card", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario);
  await page.goto(stack.openUrl);
  // The token moved out of the address bar.
  await expect(page).not.toHaveURL(/token=/);
  await page.getByTestId("new-session").click();
  const input = page.getByTestId("prompt-input");
  await input.fill("Summarise the README please");
  await input.press("Enter");

  await expect(page.getByTestId("message-user").last()).toContainText("Summarise the README");
  const card = page.locator('[data-testid="tool-card"][data-tool="read"]');
  await expect(card).toBeVisible();
  await expect(page.getByTestId("message-assistant").last()).toContainText("tiny sample project");
  // Markdown was rendered (bold and a code block), not shown as source.
  await expect(page.locator('[data-testid="message-assistant"] strong').last()).toHaveText("tiny sample project");
  await expect(page.locator('[data-testid="message-assistant"] pre').last()).toContainText("const answer = 42;");
  // The tool card shows the file it read once expanded.
  await card.click();
  await expect(card.getByTestId("tool-card-result")).toContainText("Sample project");
  // Commentary is styled apart and can be hidden.
  await expect(page.getByTestId("commentary").first()).toBeVisible();
  await shot(page, testInfo, "01-conversation");
  await page.getByTestId("toggle-commentary").click();
  await expect(page.getByTestId("commentary")).toHaveCount(0);
  // Cost/tokens are shown, and the session is listed with its messages.
  await expect(page.getByTestId("session-cost")).toBeVisible();
  await expect(page.getByTestId("session-item")).toHaveCount(1);
  // Named after the first message; renamed by clicking the title.
  await expect(page.getByTestId("session-item")).toContainText("Summarise the README");
  await page.getByTestId("session-title").click();
  await page.getByTestId("session-title-input").fill("README summary");
  await page.getByTestId("session-title-input").press("Enter");
  await expect(page.getByTestId("session-item")).toContainText("README summary");
  await shot(page, testInfo, "02-sidebar");
});
