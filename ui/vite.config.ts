/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

export default defineConfig({
  base: "/",
  plugins: [react()],
  clearScreen: false,
  // The message catalogs live at the repository root (messages/), shared with the core
  // and the CLI; the dev server may serve them.
  server: { host: "127.0.0.1", port: 5173, strictPort: true, fs: { allow: [".", fileURLToPath(new URL("../messages", import.meta.url))] } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
  },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
    setupFiles: ["src/shared/i18n/testSetup.ts"],
  },
});
