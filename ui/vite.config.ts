/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The same build is served by `mia-code serve --ui ui/dist` and embedded in the desktop app.
export default defineConfig({
  plugins: [react()],
  base: "./",
  clearScreen: false,
  build: {
    outDir: "dist",
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    port: 5173,
    strictPort: false,
    // `npm run dev` against a running `mia-code serve` (MIA_CODE_SERVER, default port 4096).
    proxy: {
      "/api": {
        target: process.env.MIA_CODE_SERVER ?? "http://127.0.0.1:4096",
        changeOrigin: true,
        // SSE: no buffering, no timeout.
        timeout: 0,
        proxyTimeout: 0,
      },
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test-setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
