// ESLint 9 flat config for the web UI: `npm run lint` (no warnings allowed).
// TypeScript (src/, vite.config.ts) is linted with typescript-eslint's type-checked rules, the
// types coming from tsconfig.json through the project service; React code also gets the
// React Hooks rules (Rules of Hooks, exhaustive deps and the React Compiler checks) and
// jsx-a11y's recommended accessibility rules.
// Plain JavaScript (the Node scripts, the benches, this file) is not in tsconfig.json, so it gets
// the syntactic rules only.
import js from "@eslint/js";
import jsxA11y from "eslint-plugin-jsx-a11y";
import reactHooks from "eslint-plugin-react-hooks";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig([
  globalIgnores([
    "dist/",
    "node_modules/",
    "coverage/",
    "test-results/",
    // Generated from the Rust protocol types (`npm run gen:types`).
    "src/protocol/generated.ts",
  ]),
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `const { a, b, ...rest } = x` is how a copy without a and b is written.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
  },
  {
    files: ["src/**/*.{ts,tsx}"],
    extends: [reactHooks.configs.flat.recommended, jsxA11y.flatConfigs.recommended],
    languageOptions: { globals: globals.browser },
    rules: {
      // Focus moves into a dialog's first field when it opens (the WAI-ARIA dialog pattern) and
      // into an inline editor the person just opened; nothing takes the focus on page load.
      "jsx-a11y/no-autofocus": "off",
      // Scrollable regions take the keyboard focus so they can be scrolled without a mouse
      // (axe's scrollable-region-focusable).
      "jsx-a11y/no-noninteractive-tabindex": ["error", { tags: [], roles: ["tabpanel", "region", "log"], allowExpressionValues: true }],
    },
  },
  {
    // Vitest runs with `globals: true` (describe, it, expect, vi) and jsdom.
    files: ["src/**/*.test.{ts,tsx}", "src/test-setup.ts", "src/app/testing.tsx"],
    languageOptions: { globals: { ...globals.browser, ...globals.vitest } },
  },
  {
    files: ["vite.config.ts"],
    languageOptions: { globals: globals.node },
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // The benches are Node scripts, but the callbacks they hand to Playwright
    // (page.evaluate, addInitScript, waitForFunction) run in the page.
    files: ["src/app/__bench__/*.mjs"],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
]);
