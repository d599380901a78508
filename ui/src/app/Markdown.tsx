import { lazy, memo, Suspense } from "react";

// The markdown pipeline (react-markdown, remark-gfm) is its own chunk: the window and the
// session list do not wait for it. Loading starts at once, so it is normally there before the
// first message is drawn; until then text shows as plain text.
const load = () => import("./MarkdownImpl").then((m) => ({ default: m.MarkdownImpl }));
const pending = load();
const MarkdownImpl = lazy(() => pending);

export const Markdown = memo(function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  return (
    <Suspense fallback={<div className="md md-plain">{text}</div>}>
      <MarkdownImpl text={text} streaming={streaming} />
    </Suspense>
  );
});
