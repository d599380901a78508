import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { SessionSummary } from "../protocol/generated";
import { NewSessionHome, SUGGESTIONS } from "./NewSessionHome";
import { fakeTransport, Providers } from "./testing";

const s = (id: string, title: string, updated: number, extra: Partial<SessionSummary> = {}): SessionSummary =>
  ({ id, title, slug: id, directory: "/p", project_id: "x", status: "idle", created_at: 1, updated_at: updated, message_count: 2, ...extra }) as SessionSummary;

describe("a new session's page", () => {
  it("lists recent sessions, recently changed files and suggestions", async () => {
    const fake = fakeTransport((_m, path) => {
      if (path === "/api/sessions/b/timeline")
        return [{ id: "x", index: 1, kind: "tool", message_id: "m", before: "", after: "", created_at: 1, undone: false, changes: [{ path: "src/app.ts", kind: "modified" }] }];
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    const onOpen = vi.fn();
    const onPrompt = vi.fn();
    render(
      <Providers transport={fake.transport}>
        <NewSessionHome
          sessions={[s("a", "Older", 10), s("b", "Newer", 20), s("c", "Archived", 30, { archived_at: 31 })]}
          onOpenSession={onOpen}
          onPrompt={onPrompt}
        />
      </Providers>,
    );
    const recent = screen.getAllByTestId("new-home-session");
    expect(recent.map((r) => r.textContent)).toEqual([expect.stringContaining("Newer"), expect.stringContaining("Older")]);
    fireEvent.click(recent[0]!);
    expect(onOpen).toHaveBeenCalledWith("b");
    expect(screen.getAllByTestId("new-home-suggestion")).toHaveLength(SUGGESTIONS.length);
    fireEvent.click(screen.getAllByTestId("new-home-suggestion")[0]!);
    expect(onPrompt).toHaveBeenCalledWith(SUGGESTIONS[0]);
    await waitFor(() => expect(screen.getByTestId("new-home-file")).toHaveTextContent("src/app.ts"));
    fireEvent.click(screen.getByTestId("new-home-file"));
    expect(onPrompt).toHaveBeenCalledWith("@src/app.ts ");
  });
});
