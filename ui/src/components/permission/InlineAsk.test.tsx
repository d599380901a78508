import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PermissionReplyKind, PermissionRequest } from "../../protocol/generated";
import { InlineAsk } from "./InlineAsk";
import { reasonOnce, relativePath, ruleText } from "./askText";
import { bashRequest, editRequest } from "./fixtures";
import { authDiff } from "../diff/fixtures";

type ReplyFn = (id: string, reply: PermissionReplyKind) => void | Promise<void>;

const ROOT = "/tmp/mia-e2e-x/project";
const CONFIG = "/tmp/mia-e2e-x/home/.config/mia-code/config.json";

/** An edit as the runtime sends it: absolute target, the rule (with its config path) in the reason. */
const edit: PermissionRequest = {
  ...editRequest,
  target: `${ROOT}/src/auth/session.ts`,
  matched_rule: `ask edit from ${CONFIG}`,
  reason: `Needs confirmation to edit src/auth/session.ts (matched rule: ask edit from ${CONFIG})`,
  proposed: authDiff,
};

function setup(request: PermissionRequest = edit, opts: { armDelayMs?: number; active?: boolean } = {}) {
  const onReply = vi.fn<ReplyFn>();
  const user = userEvent.setup();
  const utils = render(
    <>
      <textarea aria-label="composer" />
      <InlineAsk
        request={request}
        onReply={onReply}
        active={opts.active ?? true}
        directory={ROOT}
        armDelayMs={opts.armDelayMs ?? 0}
      />
    </>,
  );
  return { user, onReply, ...utils };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("InlineAsk", () => {
  it("states the reason once, with paths relative to the project and no config path", () => {
    setup();
    const ask = screen.getByTestId("permission-ask");
    expect(screen.getByTestId("permission-reason")).toHaveTextContent(/^Needs confirmation to edit src\/auth\/session\.ts$/);
    // The config file's absolute path is never repeated in what is shown (Details names its kind).
    expect(ask.textContent).not.toContain(CONFIG);
    expect(ask.textContent).not.toContain(ROOT);
    expect(ask.textContent?.match(/Needs confirmation/g)).toHaveLength(1);
    expect(screen.getByTestId("permission-target")).toHaveTextContent(/^src\/auth\/session\.ts$/);
    expect(screen.getByTestId("permission-rule")).toHaveTextContent("ask edit · global config");
  });

  it("shows the proposed change as a diff", () => {
    setup();
    const change = screen.getByTestId("permission-proposed");
    expect(within(change).getAllByText(/TTL/).length).toBeGreaterThan(0);
  });

  it("shows a command's parts and the target of other tools", () => {
    setup(bashRequest);
    expect(screen.getAllByTestId("permission-segment")).toHaveLength(3);
  });

  it("has a filled primary 'Allow once' and sends it on Enter, wherever the focus is outside a field", async () => {
    const { user, onReply } = setup();
    const once = screen.getByTestId("permission-allow-once");
    expect(once).toHaveClass("mia-ask-btn-primary");
    expect(screen.getByTestId("permission-ask")).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(onReply).toHaveBeenCalledWith(edit.id, { kind: "once" });
  });

  it("denies on Escape and answers with the number keys", async () => {
    const { user, onReply } = setup();
    await user.keyboard("{Escape}");
    expect(onReply).toHaveBeenLastCalledWith(edit.id, { kind: "deny" });
  });

  it("picks an answer by its number (2: for this session, 3: always for this project)", async () => {
    const { user, onReply } = setup();
    await user.keyboard("3");
    expect(onReply).toHaveBeenCalledWith(edit.id, { kind: "project" });
  });

  it("leaves keys typed in a text field alone", async () => {
    const { user, onReply } = setup();
    await user.click(screen.getByRole("textbox", { name: "composer" }));
    await user.keyboard("1{Enter}{Escape}");
    expect(onReply).not.toHaveBeenCalled();
  });

  it("does not answer with keys when it is not the active ask", async () => {
    const { user, onReply } = setup(edit, { active: false });
    await user.keyboard("{Enter}");
    expect(onReply).not.toHaveBeenCalled();
  });

  it("draws the arming delay as a fill and ignores answers until it is over", () => {
    vi.useFakeTimers();
    const { onReply } = setup(edit, { armDelayMs: 400 });
    const ask = screen.getByTestId("permission-ask");
    const once = screen.getByTestId("permission-allow-once");
    expect(ask).toHaveAttribute("data-armed", "false");
    expect(ask.style.getPropertyValue("--mia-arm-ms")).toBe("400ms");
    // Drawn as a fill, not as a disabled button.
    expect(once).toHaveAttribute("data-arming");
    expect(once).toBeEnabled();
    expect(screen.getByTestId("permission-allow-more")).toHaveAttribute("data-arming");
    fireEvent.click(once);
    fireEvent.keyDown(ask, { key: "Enter" });
    expect(onReply).not.toHaveBeenCalled();
    act(() => {
      vi.advanceTimersByTime(400);
    });
    expect(ask).toHaveAttribute("data-armed", "true");
    expect(once).not.toHaveAttribute("data-arming");
    fireEvent.click(once);
    expect(onReply).toHaveBeenCalledWith(edit.id, { kind: "once" });
  });

  it("offers the wider answers in the Allow… and Deny… menus", async () => {
    const { user, onReply } = setup();
    await user.click(screen.getByTestId("permission-allow-more"));
    const menu = await screen.findByRole("menu", { name: "Allow…" });
    expect(within(menu).getAllByRole("menuitem").map((i) => i.textContent)).toEqual([
      "Allow for this session (build only)2",
      "Always for this project (build only)3",
    ]);
    await user.click(within(menu).getByTestId("permission-allow-session"));
    expect(onReply).toHaveBeenCalledWith(edit.id, { kind: "session" });
  });

  it("denies with feedback from the Deny… menu", async () => {
    const { user, onReply } = setup();
    await user.click(screen.getByTestId("permission-deny-more"));
    const menu = await screen.findByRole("menu", { name: "Deny…" });
    expect(within(menu).getByTestId("permission-never")).toBeInTheDocument();
    await user.click(within(menu).getByTestId("permission-feedback"));
    const input = await screen.findByTestId("permission-feedback-input");
    expect(input).toHaveFocus();
    await user.type(input, "use a constant{Enter}");
    expect(onReply).toHaveBeenCalledWith(edit.id, { kind: "reject_with_feedback", feedback: "use a constant" });
  });

  it("offers no Allow… menu when only 'once' may be given", () => {
    setup(bashRequest);
    expect(screen.queryByTestId("permission-allow-more")).toBeNull();
    expect(screen.getByTestId("permission-deny-more")).toBeInTheDocument();
  });
});

describe("askText", () => {
  it("makes paths under the project relative and leaves others", () => {
    expect(relativePath(`${ROOT}/src/a.ts`, ROOT)).toBe("src/a.ts");
    expect(relativePath(`${ROOT}/src/a.ts`, `${ROOT}/`)).toBe("src/a.ts");
    expect(relativePath("/etc/hosts", ROOT)).toBe("/etc/hosts");
    expect(relativePath("/home/me/x", ROOT, "/home/me")).toBe("~/x");
    expect(relativePath("npm test", ROOT)).toBe("npm test");
  });

  it("states a reason without the rule it repeats", () => {
    expect(reasonOnce(edit.reason, ROOT)).toBe("Needs confirmation to edit src/auth/session.ts");
    expect(reasonOnce("bash commands are asked for by default")).toBe("bash commands are asked for by default");
  });

  it("names a rule's source", () => {
    expect(ruleText(`ask edit from ${CONFIG}`, ROOT)).toEqual({ rule: "ask edit", source: "global config" });
    expect(ruleText(`ask edit from ${ROOT}/.mia-code/config.json`, ROOT)).toEqual({ rule: "ask edit", source: "project config" });
    expect(ruleText("ask bash (built-in defaults)")).toEqual({ rule: "ask bash", source: "built-in defaults" });
    expect(ruleText(null)).toBeNull();
  });
});
