import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import type { SandboxView } from "../protocol/generated";
import { Settings } from "./Settings";
import { fakeTransport, Providers } from "./testing";

function renderWith(sandbox: SandboxView) {
  const fake = fakeTransport((_m, path) => {
    if (path.startsWith("/api/settings"))
      return { agents: [], default_agent: "build", providers: [], global_config: "/h/config.json", config_files: [], sandbox };
    if (path.startsWith("/api/approvals")) return [];
    return undefined;
  });
  render(
    <Providers transport={fake.transport}>
      <Settings directory={null} onClose={() => undefined} onCreateAgent={() => undefined} />
    </Providers>,
  );
}

describe("Settings: the sandbox", () => {
  it("says commands run sandboxed, and how", async () => {
    renderWith({
      mode: "workspace-write",
      mechanism: "landlock+seccomp",
      available: true,
      detail: "Landlock ABI 7, seccomp network filter",
      effect: "sandboxed",
    });
    const s = await screen.findByTestId("settings-sandbox");
    expect(s).toHaveTextContent("run in the OS sandbox (landlock+seccomp, workspace-write)");
    expect(s).toHaveTextContent("Landlock ABI 7");
  });

  it("says when this machine has none (Windows) and what that means", async () => {
    renderWith({
      mode: "workspace-write",
      available: false,
      detail: "this OS has no sandbox for shell commands yet",
      effect: "ask",
    });
    const s = await screen.findByTestId("settings-sandbox");
    expect(s).toHaveAttribute("data-effect", "ask");
    expect(s).toHaveTextContent("No OS sandbox on this machine (this OS has no sandbox for shell commands yet)");
    expect(s).toHaveTextContent("every shell command asks");
  });
});
