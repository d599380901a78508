import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, within } from "@testing-library/react";
import type { ResultContent } from "../protocol/generated";
import type { ToolInfo } from "../state/session";
import { fakePlatform, fakeTransport, Providers } from "./testing";
import { imageSrc, ToolCard } from "./ToolCard";

const base = { callId: "b1", tool: "bash", input: { command: "make" }, messageId: "m1" };

describe("ToolCard: live output", () => {
  it("shows the tail of a running command's output", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    render(<ToolCard info={{ ...base, live: lines }} running onDiff={() => undefined} />);
    const live = screen.getByTestId("tool-card-live");
    expect(live).toHaveTextContent("line 30");
    expect(live).toHaveTextContent("line 19");
    expect(live).not.toHaveTextContent("line 18 ");
    expect(live).toHaveTextContent("… 18 earlier lines");
    expect(screen.queryByTestId("tool-card-result")).toBeNull();
  });

  it("shows the result, not the live view, once the command is done", () => {
    render(<ToolCard info={{ ...base, live: "partial", output: "all of it" }} running onDiff={() => undefined} />);
    expect(screen.queryByTestId("tool-card-live")).toBeNull();
    expect(screen.getByTestId("tool-card-result")).toHaveTextContent("all of it");
  });

  it("a stopped turn does not pretend the command still streams", () => {
    render(<ToolCard info={{ ...base, live: "partial" }} running={false} onDiff={() => undefined} />);
    expect(screen.queryByTestId("tool-card-live")).toBeNull();
  });
});

describe("ToolCard: expansion", () => {
  it("stays open when the card is unmounted and drawn again (virtualisation, session switch)", () => {
    const info = { ...base, callId: "keep-1", output: "ok" };
    const first = render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    expect(screen.queryByLabelText("Arguments")).toBeNull();
    fireEvent.click(screen.getByRole("button", { expanded: false }));
    expect(screen.getByLabelText("Arguments")).toBeInTheDocument();
    first.unmount();
    render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    expect(screen.getByLabelText("Arguments")).toBeInTheDocument();
    // Another call starts folded.
    render(<ToolCard info={{ ...info, callId: "other-1" }} running={false} onDiff={() => undefined} />);
    expect(screen.getAllByLabelText("Arguments")).toHaveLength(1);
  });
});

describe("ToolCard: long output", () => {
  it("'Show all N lines' stays pressed when the card is drawn again", () => {
    const output = Array.from({ length: 450 }, (_, i) => `out ${i + 1}`).join("\n");
    const info = { ...base, callId: "long-1", output };
    const first = render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { expanded: false }));
    const result = () => screen.getByTestId("tool-card-result");
    expect(result()).toHaveTextContent("out 200");
    expect(result()).not.toHaveTextContent("out 201");
    fireEvent.click(screen.getByTestId("tool-show-all"));
    expect(result()).toHaveTextContent("out 450");
    first.unmount();
    render(<ToolCard info={info} running={false} onDiff={() => undefined} />);
    expect(result()).toHaveTextContent("out 450");
    expect(screen.queryByTestId("tool-show-all")).toBeNull();
  });
});

describe("ToolCard: MCP tools", () => {
  const mcp: ToolInfo = { callId: "mcp-1", tool: "mcp__fixture__echo", input: { text: "hi" }, messageId: "m1", output: "echo: hi" };
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

  function renderCard(info: ToolInfo) {
    const fake = fakeTransport(() => undefined);
    render(
      <Providers transport={fake.transport}>
        <ToolCard info={info} running={false} onDiff={() => undefined} />
      </Providers>,
    );
    return screen.getByTestId("tool-card");
  }

  it("names the tool and its server, the full name in the title", () => {
    const card = renderCard(mcp);
    const name = card.querySelector(".tool-name")!;
    expect(name).toHaveTextContent("echo · MCP fixture");
    expect(name).toHaveAttribute("title", "mcp__fixture__echo");
    expect(card).toHaveAttribute("data-tool", "mcp__fixture__echo");
    expect(screen.queryByTestId("tool-card-content")).toBeNull();
  });

  it("other tools keep their name as it is", () => {
    render(<ToolCard info={{ ...base, callId: "plain-1", output: "ok" }} running={false} onDiff={() => undefined} />);
    const name = screen.getByTestId("tool-card").querySelector(".tool-name")!;
    expect(name).toHaveTextContent(/^bash$/);
    expect(name).not.toHaveAttribute("title");
  });

  it("shows returned images inline below the text result, as data: URLs", () => {
    const content: ResultContent[] = [{ type: "image", media_type: "image/png", data: PNG }];
    const card = renderCard({ ...mcp, callId: "mcp-img", tool: "mcp__fixture__picture", content });
    const img = within(card).getByRole("img", { name: "From picture (image/png)" });
    expect(img).toHaveAttribute("src", `data:image/png;base64,${PNG}`);
    expect(img).toHaveClass("tool-image");
    // Below the text result.
    const result = within(card).getByTestId("tool-card-result");
    expect(result.compareDocumentPosition(img) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("never shows SVG or other image types, nor data that is not base64", () => {
    const content: ResultContent[] = [
      { type: "image", media_type: "image/svg+xml", data: "PHN2Zz48L3N2Zz4=" },
      { type: "image", media_type: "image/bmp", data: "Qk0=" },
      { type: "image", media_type: "image/png", data: 'x" onerror="alert(1)' },
      { type: "image", media_type: "text/html", data: "PGI+" },
    ];
    const card = renderCard({ ...mcp, callId: "mcp-svg", content });
    expect(within(card).queryByRole("img")).toBeNull();
    const off = within(card).getAllByTestId("tool-content-image-off");
    expect(off.map((e) => e.textContent)).toEqual([
      "[image: image/svg+xml, not shown]",
      "[image: image/bmp, not shown]",
      "[image: image/png, not shown]",
      "[image: text/html, not shown]",
    ]);
  });

  it("imageSrc allows png, jpeg, gif and webp only", () => {
    expect(imageSrc("image/jpeg", "/9j/")).toBe("data:image/jpeg;base64,/9j/");
    expect(imageSrc("IMAGE/WEBP", "UklG\nRg==")).toBe("data:image/webp;base64,UklGRg==");
    expect(imageSrc("image/gif", "R0lG")).toBe("data:image/gif;base64,R0lG");
    expect(imageSrc("image/svg+xml", "PHN2Zz4=")).toBeNull();
    expect(imageSrc("image/png", "")).toBeNull();
  });

  it("opens web resource links in the system browser; other URIs are text", () => {
    fakePlatform.openExternal.mockClear();
    const content: ResultContent[] = [
      { type: "resource_link", uri: "https://example.org/spec", name: "The spec", description: "Version 2", mime_type: "text/html" },
      { type: "resource_link", uri: "file:///etc/passwd", name: "passwd" },
      { type: "resource_link", uri: "javascript:alert(1)", name: "click me" },
    ];
    const card = renderCard({ ...mcp, callId: "mcp-link", content });
    const links = within(card).getAllByTestId("tool-content-link");
    expect(links).toHaveLength(3);
    const a = within(links[0]!).getByRole("link", { name: "The spec" });
    expect(a).toHaveAttribute("href", "https://example.org/spec");
    expect(a).toHaveAttribute("rel", "noopener noreferrer");
    expect(a).toHaveAttribute("target", "_blank");
    expect(links[0]).toHaveTextContent("The spec (text/html) — Version 2");
    fireEvent.click(a);
    expect(fakePlatform.openExternal).toHaveBeenCalledWith("https://example.org/spec");
    expect(within(links[1]!).queryByRole("link")).toBeNull();
    expect(links[1]).toHaveTextContent("passwd file:///etc/passwd");
    expect(within(links[2]!).queryByRole("link")).toBeNull();
    expect(card.querySelector('a[href^="javascript"], a[href^="file"]')).toBeNull();
  });

  it("puts embedded text resources in a folded details with the URI as summary", () => {
    const content: ResultContent[] = [
      { type: "resource", uri: "file:///notes.txt", mime_type: "text/plain", text: "line one\nline two" },
      { type: "resource", uri: "file:///blob.bin", mime_type: "application/octet-stream" },
    ];
    const card = renderCard({ ...mcp, callId: "mcp-res", content });
    const [text, blob] = within(card).getAllByTestId("tool-content-resource");
    expect(text!.tagName).toBe("DETAILS");
    expect(text).not.toHaveAttribute("open");
    expect(text!.querySelector("summary")).toHaveTextContent("file:///notes.txt (text/plain)");
    expect(text!.querySelector("pre")).toHaveTextContent("line one line two");
    expect(blob).toHaveTextContent("file:///blob.bin (application/octet-stream, not shown)");
  });
});
