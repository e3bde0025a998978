import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { ApiClient, createDefaultTransport } from "../shared/api/client";
import { installCloseGuard } from "../shared/lib/closeGuard";
import { applyLang, applyTheme, initialLang, initialTheme } from "../shared/lib/prefs";
import "./styles.css";
import { markStartup } from "../shared/lib/startup";
import { loadMessages } from "../shared/i18n";

markStartup("page.main");

const lang = initialLang(navigator.language);
const theme = initialTheme();
applyLang(lang);
applyTheme(theme);

const client = new ApiClient(createDefaultTransport());
installCloseGuard();
const root = document.getElementById("root");
// Only the active language's catalog is parsed before the first screen; the other loads
// when the person switches to it. A catalog that fails to load still renders (ids show).
const messages = loadMessages(lang).catch(() => undefined);
if (root) {
  void messages.then(() => {
    markStartup("page.messages");
    createRoot(root).render(
      <StrictMode>
        <App client={client} lang={lang} theme={theme} />
      </StrictMode>,
    );
  });
}
