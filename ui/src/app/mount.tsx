// The window's React tree, mounted by main.tsx once this module and the active language's
// catalog are both in (they load side by side, with the first project list's call).
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App, type AppProps } from "./App";
import { installCloseGuard } from "../shared/lib/closeGuard";

export function mount(root: HTMLElement, props: Pick<AppProps, "client" | "lang" | "theme" | "firstProjects" | "firstList">) {
  installCloseGuard();
  createRoot(root).render(
    <StrictMode>
      <App {...props} />
    </StrictMode>,
  );
}
