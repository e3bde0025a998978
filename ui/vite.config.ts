/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

/** The module main.tsx imports first, for the first screen: the window's React tree. */
const FIRST_SCREEN = "/src/app/mount.tsx";

/**
 * Asks for the first screen's code from index.html: a `<link rel="modulepreload">` for
 * the window's chunk (`./mount`) and every chunk it imports statically. main.tsx imports
 * it dynamically (so the catalog and the first project list start beside it); without
 * these links its fetch would start only once the entry has loaded and run. Links, not
 * an inline script: the CSP allows none.
 */
function preloadFirstScreen(): Plugin {
  return {
    name: "inkstone:preload-first-screen",
    apply: "build",
    transformIndexHtml: {
      order: "post",
      handler(html, ctx) {
        const chunks = new Map(Object.values(ctx.bundle ?? {}).flatMap((c) => (c.type === "chunk" ? [[c.fileName, c] as const] : [])));
        const first = [...chunks.values()].find((c) => c.facadeModuleId?.endsWith(FIRST_SCREEN));
        if (!first) throw new Error(`preloadFirstScreen: no chunk for ${FIRST_SCREEN}`);
        const files: string[] = [];
        const visit = (file: string) => {
          if (files.includes(file) || html.includes(`/${file}"`)) return;
          files.push(file);
          for (const next of chunks.get(file)?.imports ?? []) visit(next);
        };
        visit(first.fileName);
        return files.map((file) => ({ tag: "link", attrs: { rel: "modulepreload", crossorigin: true, href: `/${file}` }, injectTo: "head" as const }));
      },
    },
  };
}

export default defineConfig({
  base: "/",
  plugins: [react(), preloadFirstScreen()],
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
