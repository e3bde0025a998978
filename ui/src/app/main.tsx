import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { ApiClient, createDefaultTransport } from "../shared/api/client";
import { installCloseGuard } from "../shared/lib/closeGuard";
import { applyLang, applyTheme, initialLang, initialTheme } from "../shared/lib/prefs";
import "./styles.css";
import { markStartup } from "../shared/lib/startup";

markStartup("page.main");

const lang = initialLang(navigator.language);
const theme = initialTheme();
applyLang(lang);
applyTheme(theme);

const client = new ApiClient(createDefaultTransport());
installCloseGuard();
const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App client={client} lang={lang} theme={theme} />
    </StrictMode>,
  );
}
