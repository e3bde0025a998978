import { applyLang, applyTheme, initialLang, initialTheme } from "../shared/lib/prefs";
import "./styles.css";
import { markStartup } from "../shared/lib/startup";
import { loadMessages } from "../shared/i18n";

markStartup("page.main");

const lang = initialLang(navigator.language);
const theme = initialTheme();
applyLang(lang);
applyTheme(theme);

// The first screen needs the app (React, the shell) and the active language's catalog
// (only that one: the other loads when the person switches to it). This small entry
// starts both at once, so the catalog's fetch and parse overlap the app's instead of
// waiting for it. A catalog that fails to load still renders (ids show).
const app = import("./mount");
const messages = loadMessages(lang).catch(() => undefined);
const root = document.getElementById("root");
if (root) {
  void Promise.all([app, messages]).then(([{ mount }]) => {
    markStartup("page.messages");
    mount(root, lang, theme);
  });
}
