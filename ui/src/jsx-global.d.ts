// hast-util-to-jsx-runtime types its result as the global `JSX.Element`, which React 19's types no
// longer declare (unresolved, it would be an error type). Point the global namespace at React's,
// as that package's readme says to.
import type { JSX as ReactJSX } from "react/jsx-runtime";

declare global {
  namespace JSX {
    type ElementClass = ReactJSX.ElementClass;
    type Element = ReactJSX.Element;
    type IntrinsicElements = ReactJSX.IntrinsicElements;
  }
}
