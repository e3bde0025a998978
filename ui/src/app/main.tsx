import { applyLang, applyTheme, initialLang, initialTheme } from "../shared/lib/prefs";
import "./styles.css";
import { markStartup } from "../shared/lib/startup";
import { loadMessages } from "../shared/i18n";
import { startClient } from "./start";

markStartup("page.main");

const lang = initialLang(navigator.language);
const theme = initialTheme();
applyLang(lang);
applyTheme(theme);

// The first screen needs the app (React, the shell), the active language's catalog (only
// that one: the other loads when the person switches to it) and the project list. This
// small entry starts all three at once, so the list's call (which may wait for the store
// to open) and the catalog's fetch and parse overlap the app's instead of waiting for it.
// index.html already asked for the app's code (a build-time modulepreload, see
// vite.config.ts). A catalog that fails to load still renders (ids show); a list that
// fails is read again by the window, which shows that error as it always did.
const app = import("./mount");
const messages = loadMessages(lang).catch(() => undefined);
const { client, firstProjects } = startClient();
const root = document.getElementById("root");
if (root) {
  void Promise.all([app, messages]).then(([{ mount }]) => {
    markStartup("page.messages");
    mount(root, { client, lang, theme, firstProjects });
  });
}
