import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { EditableTitle } from "./EditableTitle";

describe("EditableTitle", () => {
  it("renames on Enter with the trimmed title", async () => {
    const onRename = vi.fn(() => Promise.resolve());
    render(<EditableTitle title="Old title" onRename={onRename} />);
    await userEvent.click(screen.getByTestId("session-title"));
    const input = screen.getByTestId("session-title-input");
    await userEvent.clear(input);
    await userEvent.type(input, "  Fix the login bug  {Enter}");
    expect(onRename).toHaveBeenCalledWith("Fix the login bug");
    expect(await screen.findByTestId("session-title")).toBeInTheDocument();
  });

  it("Escape cancels and an empty or unchanged title is not sent", async () => {
    const onRename = vi.fn(() => Promise.resolve());
    render(<EditableTitle title="Keep me" onRename={onRename} />);
    await userEvent.click(screen.getByTestId("session-title"));
    await userEvent.type(screen.getByTestId("session-title-input"), " more{Escape}");
    expect(screen.getByTestId("session-title")).toHaveTextContent("Keep me");
    await userEvent.click(screen.getByTestId("session-title"));
    await userEvent.clear(screen.getByTestId("session-title-input"));
    await userEvent.keyboard("{Enter}");
    await userEvent.click(screen.getByTestId("session-title"));
    await userEvent.keyboard("{Enter}");
    expect(onRename).not.toHaveBeenCalled();
  });
});
