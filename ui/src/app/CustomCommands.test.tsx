import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { CommandInfo } from "../protocol/generated";
import { PromptInput, type PromptInputProps } from "./PromptInput";
import { commandMenuOptions, shortError } from "./prompt/commandMenu";

const customs: CommandInfo[] = [
  {
    name: "review-pr",
    description: "Review a pull request",
    argument_hint: "[pr-number]",
    source: "project",
    path: "/p/.mia/commands/review-pr.md",
    error: null,
  },
  {
    name: "git:commit",
    description: "Commit with a message",
    argument_hint: "<message>",
    source: "claude",
    path: "/p/.claude/commands/git/commit.md",
    error: null,
  },
  {
    name: "broken",
    description: null,
    argument_hint: null,
    source: "user",
    path: "/home/u/.config/mia/commands/broken.md",
    error: "front matter: YAML error at line 2: mapping values are not allowed here\nmore detail",
  },
  {
    name: "bro",
    description: "Short and fine",
    source: "opencode",
    path: "/p/.opencode/command/bro.md",
    error: null,
  },
];

function setup(over: Partial<PromptInputProps> = {}) {
  const props: PromptInputProps = {
    loadFiles: vi.fn(() => Promise.resolve([])),
    history: [],
    onSend: vi.fn(() => Promise.resolve(true)),
    onCommand: vi.fn(),
    onToggleMode: vi.fn(),
    running: false,
    customCommands: customs,
    ...over,
  };
  render(<PromptInput {...props} />);
  const input = screen.getByTestId<HTMLTextAreaElement>("prompt-input");
  return { props, input, user: userEvent.setup() };
}

const option = (name: string) =>
  within(screen.getByTestId("command-menu"))
    .getAllByTestId("command-option")
    .find((o) => o.getAttribute("data-command") === name)!;

describe("the / menu: custom commands", () => {
  it("lists them after the built-ins with their argument hint, description and source", async () => {
    const { input, user } = setup();
    await user.click(input);
    await user.type(input, "/");
    const names = (await screen.findAllByTestId("command-option")).map((o) => o.getAttribute("data-command"));
    expect(names.indexOf("review-pr")).toBeGreaterThan(names.indexOf("help"));
    expect(names.slice(-4)).toEqual(["review-pr", "git:commit", "broken", "bro"]);
    const review = option("review-pr");
    expect(review).toHaveTextContent("/review-pr [pr-number] project Review a pull request");
    expect(within(review).getByTestId("command-source")).toHaveTextContent("project");
    expect(review).toHaveAttribute("data-source", "project");
    expect(review).not.toHaveAttribute("aria-disabled");
    expect(within(option("git:commit")).getByTestId("command-source")).toHaveTextContent("claude");
    expect(option("git:commit")).toHaveTextContent("<message>");
  });

  it("a command whose file is not used is greyed, shows why and cannot be picked", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/broken");
    const broken = option("broken");
    expect(broken).toHaveAttribute("aria-disabled", "true");
    expect(broken).toHaveClass("disabled");
    expect(within(broken).getByTestId("command-error")).toHaveTextContent(
      "not used: front matter: YAML error at line 2: mapping values are not allowed here",
    );
    expect(broken.getAttribute("title")).toContain("more detail");
    expect(broken.getAttribute("title")).toContain("broken.md");
    // Neither a click nor Enter picks it.
    await user.click(broken);
    expect(input.value).toBe("/broken");
    await user.keyboard("{Enter}");
    expect(input.value).toBe("/broken");
    expect(props.onSend).not.toHaveBeenCalled();
    expect(props.onCommand).not.toHaveBeenCalled();
  });

  it("picking one puts `/name ` in the input for its arguments and sends nothing", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/review-");
    expect(screen.getAllByTestId("command-option")).toHaveLength(1);
    await user.keyboard("{Enter}");
    expect(input.value).toBe("/review-pr ");
    await waitFor(() => expect(input.selectionStart).toBe("/review-pr ".length));
    expect(screen.queryByTestId("command-menu")).not.toBeInTheDocument();
    expect(props.onSend).not.toHaveBeenCalled();
    expect(props.onCommand).not.toHaveBeenCalled();
    // The arguments, then Enter sends the line as a message (the backend expands it).
    await user.type(input, "42{Enter}");
    expect(props.onSend).toHaveBeenCalledWith("/review-pr 42");
    expect(props.onCommand).not.toHaveBeenCalled();
  });

  it("a click picks one too", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/g");
    await user.click(option("git:commit"));
    expect(input.value).toBe("/git:commit ");
    expect(props.onSend).not.toHaveBeenCalled();
  });

  it("filters by the typed prefix, colons included", async () => {
    const { input, user } = setup();
    await user.click(input);
    await user.type(input, "/gi");
    expect(screen.getAllByTestId("command-option").map((o) => o.getAttribute("data-command"))).toEqual(["git:commit"]);
    await user.type(input, "t:c");
    expect(screen.getAllByTestId("command-option").map((o) => o.getAttribute("data-command"))).toEqual(["git:commit"]);
    await user.type(input, "x");
    expect(screen.queryByTestId("command-menu")).not.toBeInTheDocument();
  });

  it("the arrows pass over a command that cannot be picked", async () => {
    const { input, user } = setup();
    await user.click(input);
    await user.type(input, "/bro");
    // broken (unusable) then bro: the first that can be picked is current.
    expect(screen.getAllByTestId("command-option").map((o) => o.getAttribute("data-command"))).toEqual(["broken", "bro"]);
    await waitFor(() => expect(option("bro")).toHaveAttribute("aria-selected", "true"));
    expect(option("broken")).toHaveAttribute("aria-selected", "false");
    await user.keyboard("{ArrowDown}");
    expect(option("bro")).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{ArrowUp}");
    expect(option("bro")).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{Tab}");
    expect(input.value).toBe("/bro ");
  });

  it("the built-ins keep running at once", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/und{Enter}");
    expect(props.onCommand).toHaveBeenCalledWith("undo");
    await waitFor(() => expect(input.value).toBe(""));
  });
});

describe("commandMenuOptions", () => {
  it("lists the built-ins first, then the custom commands, by prefix", () => {
    const all = commandMenuOptions("re", customs);
    expect(all.map((c) => `${c.kind}:${c.name}`)).toEqual([
      "builtin:redo",
      "builtin:revert",
      "builtin:review",
      "custom:review-pr",
    ]);
    // Two files of one name (one lost to the other) are two options.
    const twice = commandMenuOptions("x", [
      { name: "x", source: "project", path: "/a/x.md", error: null },
      { name: "x", source: "user", path: "/b/x.md", error: "the name is taken by /a/x.md" },
    ]);
    expect(new Set(twice.map((c) => c.key)).size).toBe(2);
  });

  it("shortens an error to its first line", () => {
    expect(shortError("one\ntwo")).toBe("one");
    expect(shortError("x".repeat(100), 10)).toBe("xxxxxxxxx…");
  });
});
