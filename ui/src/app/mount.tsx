// The window's React tree, mounted by main.tsx once this module and the active language's
// catalog are both in (they load side by side).
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { ApiClient, createDefaultTransport } from "../shared/api/client";
import { installCloseGuard } from "../shared/lib/closeGuard";
import type { Lang } from "../shared/i18n";
import type { Theme } from "../shared/lib/prefs";

export function mount(root: HTMLElement, lang: Lang, theme: Theme) {
  const client = new ApiClient(createDefaultTransport());
  installCloseGuard();
  createRoot(root).render(
    <StrictMode>
      <App client={client} lang={lang} theme={theme} />
    </StrictMode>,
  );
}
