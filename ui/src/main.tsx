import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { ApiClient, createDefaultTransport } from "./api/client";
import { detectLang } from "./i18n";
import "./styles.css";

const lang = detectLang(navigator.language);
document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";

const client = new ApiClient(createDefaultTransport());
const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App client={client} lang={lang} />
    </StrictMode>,
  );
}
