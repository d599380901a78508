import { test, expect } from "@playwright/test";
import { startStack, type Stack } from "./harness";
import { shot } from "./screens";

// A conversation of a few turns compacted with /compact: "Compacting the
// conversation…" while the compaction agent answers, then the marker with the
// counts; it opens to the summary (Markdown) and to the archived messages,
// which the default view no longer lists.
const scenario = {
  name: "compact a conversation",
  steps: [
    {
      match: { last_message_contains: "Describe the project" },
      response: { events: [{ text: "This is a tiny sample project for trying mia-code." }] },
    },
    {
      match: { last_message_contains: "Which files" },
      response: { events: [{ text: "README.md and src/app.ts." }] },
    },
    {
      match: { last_message_contains: "What does greet do" },
      response: { events: [{ text: "It says hello to a name." }] },
    },
    {
      // The compaction agent's request (its system prompt names it); slow
      // enough that the running line can be seen.
      match: { system_contains: "compaction agent" },
      response: {
        headers_delay_ms: 1500,
        events: [{ text: "## Narrative\n\nSUMMARY: the user explored the **sample project** (README, src/app.ts, greet)." }],
      },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("/compact summarises older messages; the marker shows the summary and the archived messages", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario);
  await page.goto(stack.openUrl);
  await page.getByTestId("new-session").click();

  const input = page.getByTestId("prompt-input");
  const turns: [string, string][] = [
    ["Describe the project", "tiny sample project"],
    ["Which files are there?", "README.md and src/app.ts."],
    ["What does greet do?", "It says hello to a name."],
  ];
  for (const [prompt, answer] of turns) {
    await input.fill(prompt);
    await input.press("Enter");
    await expect(page.getByTestId("message-assistant").last()).toContainText(answer);
    await expect(page.getByTestId("stop")).toBeHidden();
  }
  await expect(page.getByTestId("message-user")).toHaveCount(3);

  // /compact from the composer: the running line, then the result and the marker.
  await input.fill("/compact");
  await expect(page.locator('[data-testid="command-option"][data-command="compact"]')).toBeVisible();
  await input.press("Enter");
  await expect(page.getByTestId("compacting")).toContainText("Compacting the conversation…");
  await expect(page.getByTestId("compacting")).toBeHidden();
  await expect(page.getByTestId("compaction-failed")).toHaveCount(0);
  await expect(page.getByTestId("toast").filter({ hasText: "into a summary" })).toContainText(
    /Compacted \d+ messages? into a summary\. \d+ recent messages? retained\./,
  );

  const marker = page.getByTestId("message-compaction");
  await expect(marker).toBeVisible();
  const headline = marker.getByTestId("compaction-headline");
  await expect(headline).toContainText(/Compacted \d+ messages? · ~\d[\d.]*k? → ~\d[\d.]*k? tokens · by you/);
  const compacted = Number(/Compacted (\d+) message/.exec(await headline.innerText())?.[1]);
  expect(compacted).toBeGreaterThan(0);
  // The messages it replaced left the conversation: the first question is archived.
  await expect(page.getByTestId("conversation").getByText("Describe the project")).toHaveCount(0);
  await expect(page.getByTestId("message-user").first()).not.toContainText("Describe the project");

  // The summary, rendered as Markdown.
  const summaryToggle = marker.getByTestId("compaction-summary-toggle");
  await expect(summaryToggle).toHaveAttribute("aria-expanded", "false");
  await summaryToggle.click();
  await expect(summaryToggle).toHaveAttribute("aria-expanded", "true");
  const summary = marker.getByTestId("compaction-summary");
  await expect(summary).toContainText("SUMMARY: the user explored the sample project");
  await expect(summary.locator("strong").first()).toHaveText("sample project");
  await expect(summary.getByRole("heading", { name: "Narrative" })).toBeVisible();

  // The archived messages, inline and labelled, from ?archived=true.
  const archiveToggle = marker.getByTestId("compaction-archive-toggle");
  await expect(archiveToggle).toHaveText(`Show the ${compacted} archived message${compacted === 1 ? "" : "s"}`);
  await archiveToggle.click();
  await expect(archiveToggle).toHaveAttribute("aria-expanded", "true");
  const archived = marker.getByTestId("archived-message");
  await expect(archived).toHaveCount(compacted);
  await expect(archived.first()).toContainText("archived");
  await expect(archived.first()).toContainText("Describe the project");
  await shot(page, testInfo, "40-compaction-marker");

  // Collapsible again, from the keyboard.
  await archiveToggle.focus();
  await page.keyboard.press("Enter");
  await expect(archiveToggle).toHaveAttribute("aria-expanded", "false");
  await expect(marker.getByTestId("archived-message")).toHaveCount(0);

  // A reload shows the same: the summary in place of the archived messages.
  await page.reload();
  await page.getByTestId("session-item").first().click();
  await expect(page.getByTestId("message-compaction")).toBeVisible();
  await expect(page.getByTestId("conversation").getByText("Describe the project")).toHaveCount(0);
});
