import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// A conversation forked from a message's menu: the fork opens (with its
// "Forked from" marker), works on its own (writes a file), the fork tree shows
// it with its edge labelled by the fork point, and "Compare with parent" shows
// the two sessions' changes since the fork side by side.
const scenario = {
  name: "fork a conversation",
  steps: [
    {
      match: { last_message_contains: "Describe the project" },
      response: { events: [{ text: "This is a tiny sample project for trying mia-code." }] },
    },
    {
      match: { last_message_contains: "Write the notes" },
      response: {
        events: [
          { text: "Writing the notes." },
          {
            tool_call: {
              id: "toolu_fork_write",
              name: "write",
              arguments: { path: "notes.txt", content: "notes from the fork\n" },
            },
          },
        ],
      },
    },
    {
      match: { has_tool_result: "toolu_fork_write" },
      response: { events: [{ text: "Wrote the notes." }] },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

test("fork from a message, see it in the fork tree, compare it with its parent", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario, { permissions: [{ permission: "write", action: "allow" }] });
  await page.goto(stack.openUrl);

  // A session with a couple of messages.
  await page.getByTestId("new-session").click();
  await page.getByTestId("prompt-input").fill("Describe the project");
  await page.getByTestId("prompt-input").press("Enter");
  const answer = page.getByTestId("message-assistant").last();
  await expect(answer).toContainText("tiny sample project");
  await expect(page.getByTestId("stop")).toBeHidden();
  const parentTitle = (await page.getByTestId("session-title").innerText()).trim();
  const parentId = await page.locator(".session-item.active").getAttribute("data-session-id");
  expect(parentId).toBeTruthy();

  // The answer's ⋯ menu → Fork from here: the fork opens.
  const menuButton = answer.getByTestId("message-menu");
  await menuButton.click();
  await expect(menuButton).toHaveAttribute("aria-expanded", "true");
  await page.getByRole("menuitem", { name: "Fork from here" }).click();
  await expect(page.getByTestId("session-title")).toContainText("(fork)");
  const marker = page.getByTestId("message-fork");
  await expect(marker).toContainText(`Forked from ${parentTitle}`);
  await expect(marker).toContainText("tiny sample project");
  // The copied history is there above the marker.
  await expect(page.getByTestId("message-user").first()).toContainText("Describe the project");
  await expect(page.getByTestId("session-item")).toHaveCount(2);
  const forkId = await page.locator(".session-item.active").getAttribute("data-session-id");
  expect(forkId).toBeTruthy();
  expect(forkId).not.toBe(parentId);

  // The fork does something of its own.
  await page.getByTestId("prompt-input").fill("Write the notes");
  await page.getByTestId("prompt-input").press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toContainText("Wrote the notes.");
  await until("notes.txt on disk", () => stack.read("notes.txt") === "notes from the fork\n");
  await shot(page, testInfo, "30-fork-session");

  // The fork tree: both sessions, the edge labelled with the fork point.
  await page.getByTestId("open-fork-tree").click();
  const treeView = page.getByTestId("fork-tree-view");
  await expect(treeView).toBeVisible();
  const nodes = treeView.getByTestId("fork-node");
  await expect(nodes).toHaveCount(2);
  const forkNode = treeView.locator(`[data-testid="fork-node"][data-session-id="${forkId}"]`);
  await expect(forkNode).toContainText("(fork)");
  await expect(forkNode).toHaveAttribute("aria-current", "true");
  const edge = treeView.getByTestId("fork-edge");
  await expect(edge).toHaveCount(1);
  await expect(edge).toHaveAttribute("data-from", parentId!);
  await expect(edge).toHaveAttribute("data-to", forkId!);
  await expect(edge).toContainText("This is a tiny sample");
  // Laid out left to right: the fork right of its parent.
  const parentNode = treeView.locator(`[data-testid="fork-node"][data-session-id="${parentId}"]`);
  const px = Number(await parentNode.getAttribute("data-x"));
  const fx = Number(await forkNode.getAttribute("data-x"));
  expect(fx).toBeGreaterThan(px);
  // Keyboard: the tree has focus, Left goes to the parent.
  await expect(treeView.getByTestId("fork-tree")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await expect(parentNode).toHaveAttribute("aria-selected", "true");
  await shot(page, testInfo, "31-fork-tree");

  // Open the fork from the tree, then compare it with its parent.
  await forkNode.getByText("(fork)").click();
  await expect(page.getByTestId("session-title")).toContainText("(fork)");
  await page.getByTestId("compare-parent").click();
  const cmp = page.getByTestId("session-compare");
  await expect(cmp).toBeVisible();
  const left = cmp.getByTestId("session-compare-left");
  const right = cmp.getByTestId("session-compare-right");
  await expect(left).toContainText("(fork)");
  await expect(left).toContainText("notes.txt");
  await expect(left).toContainText("notes from the fork");
  await expect(right).toContainText(parentTitle);
  await expect(right.getByTestId("session-compare-none")).toBeVisible();
  await shot(page, testInfo, "32-fork-compare");
});
