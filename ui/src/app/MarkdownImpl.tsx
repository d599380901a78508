import { Fragment, memo, startTransition, useEffect, useMemo, useState, type ReactNode } from "react";
import { jsx, jsxs } from "react/jsx-runtime";
import renderMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { toJsxRuntime } from "hast-util-to-jsx-runtime";
import type { Element, ElementContent } from "hast";
import { closeOpenMarkdown, splitRendered } from "../lib/streaming";
import { Lru } from "../lib/lru";
import { usePlatform } from "./context";

type Highlighter = typeof import("../lib/highlight");
let highlighter: Highlighter | null = null;
let loading: Promise<Highlighter> | null = null;

function useHighlighter(enabled: boolean): Highlighter | null {
  const [h, setH] = useState<Highlighter | null>(highlighter);
  useEffect(() => {
    if (!enabled || h) return;
    loading ??= import("../lib/highlight").then((m) => (highlighter = m));
    let alive = true;
    void loading.then((m) => alive && setH(m));
    return () => {
      alive = false;
    };
  }, [enabled, h]);
  return enabled ? h : null;
}

function textOf(nodes: ElementContent[]): string {
  return nodes.map((n) => (n.type === "text" ? n.value : n.type === "element" ? textOf(n.children) : "")).join("");
}

/**
 * Highlighted code as React nodes, by language and code: a transcript drawn again (switching
 * back to a session, scrolling back over a message) does not highlight its code again.
 */
const highlighted = new Lru<string, ReactNode>(256 * 1024, 2_000);

const CodeBlock = memo(function CodeBlock({ code, lang, highlight }: { code: string; lang: string; highlight: boolean }) {
  const h = useHighlighter(highlight && !!lang);
  const body = useMemo((): ReactNode => {
    if (!h) return code;
    return highlighted.getOrMake(`${lang}\n${code}`, code.length, () => {
      const tree = h.highlight(code, lang);
      return tree ? toJsxRuntime(tree, { Fragment, jsx, jsxs }) : code;
    });
  }, [h, code, lang]);
  return (
    <div className="code-block">
      {lang && <span className="code-lang">{lang}</span>}
      <button
        type="button"
        className="code-copy"
        onClick={() => void navigator.clipboard?.writeText(code).catch(() => undefined)}
        aria-label="Copy code"
      >
        Copy
      </button>
      <pre>
        <code className={lang ? `hljs language-${lang}` : "hljs"}>{body}</code>
      </pre>
    </div>
  );
});

const SAFE_URL = /^(https?:|mailto:)/i;

function ExternalLink({ href, children }: { href: string | undefined; children: ReactNode }) {
  const platform = usePlatform();
  if (!href || !SAFE_URL.test(href)) return <span className="md-link-off">{children}</span>;
  return (
    <a
      href={href}
      title={href}
      rel="noopener noreferrer"
      onClick={(e) => {
        // Never navigate the webview: hand the URL to the system browser.
        e.preventDefault();
        platform?.openExternal(href);
      }}
    >
      {children}
    </a>
  );
}

function makeComponents(highlight: boolean): Components {
  return {
    a: ({ href, children }) => <ExternalLink href={href}>{children}</ExternalLink>,
    // Images are never fetched: a link the user can choose to open.
    img: ({ src, alt }) => (
      <ExternalLink href={typeof src === "string" ? src : undefined}>
        {`[image: ${alt ?? ""}](${typeof src === "string" ? src : ""})`}
      </ExternalLink>
    ),
    pre: ({ node }) => {
      const code = node?.children.find((c): c is Element => c.type === "element" && c.tagName === "code");
      const classes = code?.properties.className;
      const cls = Array.isArray(classes) ? classes.map(String).find((c) => c.startsWith("language-")) : undefined;
      const text = code ? textOf(code.children).replace(/\n$/, "") : "";
      return <CodeBlock code={text} lang={cls ? cls.slice("language-".length) : ""} highlight={highlight} />;
    },
  };
}

const finishedComponents = makeComponents(true);
const streamingComponents = makeComponents(false);
const remarkPlugins = [remarkGfm];

/**
 * A finished block's rendered elements, by its text. React elements are immutable, so the
 * same ones can be drawn again: switching back to a session (or scrolling back over a
 * message the virtualised list had let go) does not parse its markdown again. Bounded by
 * the text it holds (a few sessions' worth of visible messages and more).
 */
const rendered = new Lru<string, ReactNode>(256 * 1024, 4_000);

/** Drops what is cached (tests). */
export function clearMarkdownCache(): void {
  rendered.clear();
  highlighted.clear();
}

const Block = memo(function Block({ text, streaming }: { text: string; streaming: boolean }) {
  // react-markdown without rehype-raw turns raw HTML into visible text (escaped). Its
  // `Markdown` is a plain function (no hooks): called here so its result can be kept.
  if (streaming) return renderMarkdown({ children: text, remarkPlugins, components: streamingComponents });
  return rendered.getOrMake(text, text.length, () =>
    renderMarkdown({ children: text, remarkPlugins, components: finishedComponents }),
  );
});

/** Finished texts longer than this are rendered block by block, in the background. */
const LARGE = 8_000;
/** Blocks of a large text drawn at once; the rest follow in small batches. */
const FIRST_BLOCKS = 6;
const BATCH = 24;

/**
 * Untrusted model markdown. While streaming, the text is split into blocks:
 * finished blocks are rendered once, in their final form (memoised), and only
 * the last, growing block is parsed again, with open constructs closed. A
 * short finished text is rendered whole; a large one block by block, a few at
 * once and the rest in small batches between frames (transitions), so a long
 * answer never blocks the main thread in one piece.
 */
export const MarkdownImpl = memo(function MarkdownImpl({ text, streaming = false }: { text: string; streaming?: boolean }) {
  // A text that streamed stays block by block when it is finished: the end of a turn then
  // redraws only its last block, not the whole answer as one.
  const [streamed] = useState(streaming);
  const large = streaming || streamed || text.length > LARGE;
  // A streamed text is split again only from its last block (see splitRendered).
  const blocks = useMemo(() => (large ? splitRendered(text) : null), [text, large]);
  const [count, setCount] = useState(streaming ? Number.MAX_SAFE_INTEGER : FIRST_BLOCKS);
  const total = blocks?.length ?? 0;
  useEffect(() => {
    if (streaming || count >= total) return;
    const t = setTimeout(() => startTransition(() => setCount((c) => c + BATCH)), 0);
    return () => clearTimeout(t);
  }, [streaming, count, total]);
  if (!blocks) {
    return (
      <div className="md">
        <Block text={text} streaming={false} />
      </div>
    );
  }
  const shown = streaming ? blocks : blocks.slice(0, count);
  // Finished blocks go in chunks that render again only when one of their blocks changed, so a
  // frame of a long streamed answer reconciles a few dozen chunks, not every block. The same
  // structure while streaming and after, so the end of a turn changes only the last block.
  const finished = streaming ? shown.slice(0, -1) : shown;
  const chunks: ReactNode[] = [];
  for (let c = 0; c < finished.length; c += CHUNK) chunks.push(<Chunk key={c} blocks={finished.slice(c, c + CHUNK)} />);
  const live = streaming ? shown[shown.length - 1] : undefined;
  return (
    <div className="md">
      {chunks}
      {live !== undefined && <Block key="live" text={closeOpenMarkdown(live)} streaming />}
      {shown.length < blocks.length && <div className="md md-plain">{blocks.slice(shown.length).join("\n\n")}</div>}
    </div>
  );
});

/** Finished blocks per chunk. */
const CHUNK = 32;

const Chunk = memo(
  function Chunk({ blocks }: { blocks: string[] }) {
    return (
      <>
        {blocks.map((b, i) => (
          <Block key={i} text={b} streaming={false} />
        ))}
      </>
    );
  },
  (a, b) => a.blocks.length === b.blocks.length && a.blocks.every((x, i) => x === b.blocks[i]),
);
