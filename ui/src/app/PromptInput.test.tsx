import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { PromptInput, type PromptInputProps } from "./PromptInput";
import { fakePlatform, fakeTransport, Providers } from "./testing";

function setup(over: Partial<PromptInputProps> = {}) {
  const props: PromptInputProps = {
    loadFiles: vi.fn(() => Promise.resolve(["src/main.rs", "README.md", "src/lib.rs", "docs/api.md"])),
    history: [],
    onSend: vi.fn(() => Promise.resolve(true)),
    onCommand: vi.fn(),
    onToggleMode: vi.fn(),
    running: false,
    ...over,
  };
  render(<PromptInput {...props} />);
  const input = screen.getByTestId<HTMLTextAreaElement>("prompt-input");
  return { props, input, user: userEvent.setup() };
}

describe("PromptInput", () => {
  it("Enter sends and clears; Shift+Enter adds a line", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "hello{Shift>}{Enter}{/Shift}world");
    expect(input.value).toBe("hello\nworld");
    await user.keyboard("{Enter}");
    expect(props.onSend).toHaveBeenCalledWith("hello\nworld");
    await waitFor(() => expect(input.value).toBe(""));
  });

  it("while a turn runs, Enter still takes the text (the caller queues it) and the button says Queue", async () => {
    const { props, input, user } = setup({ running: true });
    expect(screen.getByTestId("send")).toHaveTextContent("Queue");
    await user.click(input);
    await user.type(input, "follow up{Enter}");
    expect(props.onSend).toHaveBeenCalledWith("follow up");
    await waitFor(() => expect(input.value).toBe(""));
    expect(document.activeElement).toBe(input);
  });

  it("Esc stops a running turn at once when the input is empty", async () => {
    const onStop = vi.fn();
    const { input, user } = setup({ running: true, onStop });
    await user.click(input);
    await user.keyboard("{Escape}");
    expect(onStop).toHaveBeenCalledTimes(1);
  });

  it("with a draft, Esc stops only when pressed twice within a second, and keeps the draft", async () => {
    const onStop = vi.fn();
    const { input, user } = setup({ running: true, onStop });
    await user.click(input);
    await user.type(input, "half a thought");
    await user.keyboard("{Escape}");
    expect(onStop).not.toHaveBeenCalled();
    expect(screen.getByTestId("esc-hint")).toHaveTextContent("Press Esc again");
    await user.keyboard("{Escape}");
    expect(onStop).toHaveBeenCalledTimes(1);
    expect(input.value).toBe("half a thought");
  });

  it("Esc does nothing to a turn when none runs", async () => {
    const onStop = vi.fn();
    const { input, user } = setup({ running: false, onStop });
    await user.click(input);
    await user.keyboard("{Escape}");
    expect(onStop).not.toHaveBeenCalled();
  });

  it("keeps the text when sending fails", async () => {
    const { props, input, user } = setup({ onSend: vi.fn(() => Promise.resolve(false)) });
    await user.click(input);
    await user.type(input, "important prompt{Enter}");
    expect(props.onSend).toHaveBeenCalledWith("important prompt");
    await waitFor(() => expect(screen.getByTestId("send")).not.toBeDisabled());
    expect(input.value).toBe("important prompt");
  });

  it("Up on an empty input walks back through previous messages, Down walks forward", async () => {
    const { input, user } = setup({ history: ["first question", "second question"] });
    await user.click(input);
    await user.keyboard("{ArrowUp}");
    expect(input.value).toBe("second question");
    await user.keyboard("{ArrowUp}");
    expect(input.value).toBe("first question");
    await user.keyboard("{ArrowUp}");
    expect(input.value).toBe("first question");
    await user.keyboard("{ArrowDown}");
    expect(input.value).toBe("second question");
    await user.keyboard("{ArrowDown}");
    expect(input.value).toBe("");
  });

  it("Up from the first line keeps the text being written and Down brings it back", async () => {
    const { input, user } = setup({ history: ["old"] });
    await user.click(input);
    await user.type(input, "draft");
    await user.keyboard("{ArrowUp}");
    expect(input.value).toBe("old");
    await user.keyboard("{ArrowDown}");
    expect(input.value).toBe("draft");
  });

  it("Up on a later line moves the caret instead", async () => {
    const { input, user } = setup({ history: ["old"] });
    await user.click(input);
    await user.type(input, "line one{Shift>}{Enter}{/Shift}line two");
    await user.keyboard("{ArrowUp}");
    expect(input.value).toBe("line one\nline two");
  });

  it("@ opens a fuzzy file completion; Enter inserts the path", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "look at @slib");
    const popup = await screen.findByTestId("mention-popup");
    expect(popup).toBeInTheDocument();
    const options = await screen.findAllByTestId("mention-option");
    expect(options[0]).toHaveTextContent("src/lib.rs");
    await user.keyboard("{Enter}");
    expect(input.value).toBe("look at @src/lib.rs ");
    expect(props.onSend).not.toHaveBeenCalled();
    expect(screen.queryByTestId("mention-popup")).not.toBeInTheDocument();
    expect(props.loadFiles).toHaveBeenCalledTimes(1);
  });

  it("arrow keys move through the mentions and Tab picks", async () => {
    const { input, user } = setup();
    await user.click(input);
    await user.type(input, "@");
    const options = await screen.findAllByTestId("mention-option");
    expect(options).toHaveLength(4);
    await user.keyboard("{ArrowDown}{ArrowDown}");
    expect(screen.getAllByTestId("mention-option")[2]).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{Tab}");
    expect(input.value).toBe("@src/lib.rs ");
  });

  it("/ at the start opens the command menu and Enter runs the command", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/");
    const menu = await screen.findByTestId("command-menu");
    expect(menu).toHaveTextContent("/undo");
    expect(menu).toHaveTextContent("/snapshots");
    await user.type(input, "sn");
    expect(screen.getAllByTestId("command-option")).toHaveLength(1);
    await user.keyboard("{Enter}");
    expect(props.onCommand).toHaveBeenCalledWith("snapshots");
    expect(props.onSend).not.toHaveBeenCalled();
    await waitFor(() => expect(input.value).toBe(""));
  });

  it("a command that takes arguments gets the rest of the line; others with text are sent", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.type(input, "/model anthropic/claude-haiku-4-5{Enter}");
    expect(props.onCommand).toHaveBeenCalledWith("model", "anthropic/claude-haiku-4-5");
    expect(props.onSend).not.toHaveBeenCalled();
    await waitFor(() => expect(input.value).toBe(""));
    // The input puts the caret back at the start on the next frame: type after it.
    const frame = () => new Promise((r) => setTimeout(r, 40));
    await frame();
    await user.type(input, "/agent create reviews the code{Enter}");
    expect(props.onCommand).toHaveBeenLastCalledWith("agent", "create reviews the code");
    await frame();
    await user.type(input, "/undo this please{Enter}");
    expect(props.onSend).toHaveBeenCalledWith("/undo this please");
  });

  it("@ offers the subagents before the files", async () => {
    const { input, user } = setup({
      mentionAgents: [
        { name: "explore", description: "Searches the codebase" },
        { name: "general", description: "Multi-step tasks" },
      ],
    });
    await user.click(input);
    await user.type(input, "ask @ex");
    const agents = await screen.findAllByTestId("mention-agent");
    expect(agents).toHaveLength(1);
    expect(agents[0]).toHaveTextContent("@explore");
    expect(agents[0]).toHaveTextContent("Searches the codebase");
    await user.keyboard("{Enter}");
    expect(input.value).toBe("ask @explore ");
  });

  it("the suggestions are react-aria's listbox under the combobox: the arrows wrap, a click picks, Escape closes", async () => {
    const { props, input, user } = setup({ mentionAgents: [{ name: "explore", description: "Searches the codebase" }] });
    await user.click(input);
    await user.type(input, "see @");
    const list = await screen.findByRole("listbox", { name: "Files" });
    await screen.findAllByTestId("mention-option");
    expect(input).toHaveAttribute("role", "combobox");
    expect(input).toHaveAttribute("aria-expanded", "true");
    expect(input).toHaveAttribute("aria-controls", list.id);
    // The first option is current; Up from it wraps to the last.
    expect(screen.getByTestId("mention-agent")).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{ArrowUp}");
    const last = screen.getAllByTestId("mention-option").at(-1)!;
    expect(last).toHaveAttribute("aria-selected", "true");
    expect(input).toHaveAttribute("aria-activedescendant", last.id);
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("mention-popup")).not.toBeInTheDocument();
    expect(input).toHaveAttribute("aria-expanded", "false");
    await user.type(input, " @src/m");
    await user.click(await screen.findByText("src/main.rs"));
    expect(input.value).toBe("see @ @src/main.rs ");
    expect(props.onSend).not.toHaveBeenCalled();
  });

  it("a / later in the text is not a command", async () => {
    const { input, user } = setup();
    await user.click(input);
    await user.type(input, "see src/");
    expect(screen.queryByTestId("command-menu")).not.toBeInTheDocument();
    expect(input.value).toBe("see src/");
  });

  it("keeps unsent text per draft key when the input is unmounted and comes back", async () => {
    const user = userEvent.setup();
    const props: PromptInputProps = {
      loadFiles: () => Promise.resolve([]),
      history: [],
      onSend: () => Promise.resolve(true),
      onCommand: () => undefined,
      onToggleMode: () => undefined,
      running: false,
    };
    const { unmount } = render(<PromptInput {...props} draftKey="s1" />);
    await user.type(screen.getByTestId("prompt-input"), "half a thought");
    unmount();
    const other = render(<PromptInput {...props} draftKey="s2" />);
    expect(screen.getByTestId("prompt-input")).toHaveValue("");
    other.unmount();
    render(<PromptInput {...props} draftKey="s1" />);
    expect(screen.getByTestId("prompt-input")).toHaveValue("half a thought");
  });

  it("Tab on an empty input toggles the mode; with text it does not", async () => {
    const { props, input, user } = setup();
    await user.click(input);
    await user.keyboard("{Tab}");
    expect(props.onToggleMode).toHaveBeenCalledTimes(1);
    input.focus();
    await user.type(input, "abc");
    await user.keyboard("{Tab}");
    expect(props.onToggleMode).toHaveBeenCalledTimes(1);
  });
});

describe("PromptInput: dropped and pasted files", () => {
  it("a file dropped in the browser becomes an @ mention of the matching project file", async () => {
    const onNotice = vi.fn();
    const { input } = setup({ onNotice });
    fireEvent.change(input, { target: { value: "Look at" } });
    const file = new File(["x"], "lib.rs");
    fireEvent.drop(input, { dataTransfer: { files: [file], types: ["Files"] } });
    await waitFor(() => expect(input.value).toBe("Look at @src/lib.rs "));
    // Pasting a file that is not in the project says so and inserts nothing.
    fireEvent.paste(input, { clipboardData: { files: [new File(["y"], "photo.png")] } });
    await waitFor(() => expect(onNotice).toHaveBeenCalledWith("Not mentioned: photo.png is not a file of the project"));
    expect(input.value).toBe("Look at @src/lib.rs ");
  });

  it("a file dropped on the desktop window is mentioned by its path in the project", async () => {
    let deliver: ((paths: string[]) => void) | null = null;
    const platform = { ...fakePlatform, kind: "desktop" as const, onFileDrop: (cb: (p: string[]) => void) => ((deliver = cb), () => (deliver = null)) };
    const props: PromptInputProps = {
      loadFiles: vi.fn(() => Promise.resolve([])),
      history: [],
      onSend: vi.fn(() => Promise.resolve(true)),
      onCommand: vi.fn(),
      onToggleMode: vi.fn(),
      running: false,
      projectDir: "/work/proj",
    };
    const { unmount } = render(
      <Providers transport={fakeTransport(() => undefined).transport} platform={platform}>
        <PromptInput {...props} />
      </Providers>,
    );
    const input = screen.getByTestId<HTMLTextAreaElement>("prompt-input");
    expect(deliver).not.toBeNull();
    deliver!(["/work/proj/src/deep/file.ts", "/work/proj/README.md"]);
    await waitFor(() => expect(input.value).toBe("@src/deep/file.ts @README.md "));
    unmount();
    expect(deliver).toBeNull();
  });
});
