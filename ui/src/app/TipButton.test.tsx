import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { TipButton } from "./TipButton";

describe("TipButton", () => {
  it("shows its tooltip when it gets the keyboard focus, describes the button with it, hides it on Escape, and presses", async () => {
    const onPress = vi.fn();
    render(
      <>
        <button type="button">before</button>
        <TipButton aria-label="Delete Fix the bug" tip="Delete" onPress={onPress} data-testid="del">
          🗑
        </TipButton>
      </>,
    );
    const user = userEvent.setup();
    expect(screen.queryByRole("tooltip")).toBeNull();
    await user.click(screen.getByText("before"));
    await user.tab();
    const button = screen.getByTestId("del");
    expect(button).toHaveFocus();
    const tip = await screen.findByRole("tooltip");
    expect(tip).toHaveTextContent("Delete");
    expect(button.getAttribute("aria-describedby")).toBe(tip.id);
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByRole("tooltip")).toBeNull());
    await user.keyboard("{Enter}");
    expect(onPress).toHaveBeenCalledTimes(1);
  });
});
