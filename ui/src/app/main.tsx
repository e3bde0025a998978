import { applyLang, applyTheme, initialLang, initialSidebar, initialPanelTab, initialTheme, lastProject } from "../shared/lib/prefs";
import "./styles.css";
import { afterFirstScreen, markStartup, staticFrameShown } from "../shared/lib/startup";
import { loadMessages, modKeyLabel } from "../shared/i18n";
import type { ProjectListResult } from "../shared/api/generated";
import { firstFrame, showFirstFrame } from "./firstFrame";
import { applyPlatformFonts } from "../shared/lib/platformFonts";
import { startClient } from "./start";

markStartup("page.main");

const lang = initialLang(navigator.language);
const theme = initialTheme();
applyLang(lang);
applyTheme(theme);
applyPlatformFonts(navigator.platform);

// The first screen is the project list. This small entry asks for it first and, as soon
// as it arrives, paints it as a plain static frame of the shell (./firstFrame.ts); then
// it loads the app (React, the shell) and the active language's catalog (only that one:
// the other loads when the person switches to it), and React replaces the frame. Parsing
// that code while the frame waits for its paint held the paint back (WebKitGTK under
// Xvfb: first contentful paint 611 → 533 ms median when the code waited for it), so it
// starts once the frame is painted; index.html has already fetched it (a build-time
// modulepreload, see vite.config.ts). A list that has not arrived within
// APP_WITHOUT_LIST_MS (the store may be slow to open) does not hold the app back: it
// loads, and the window shows the list when it comes. A catalog that fails to load still
// renders (ids show); a list that fails is read again by the window, which shows that
// error as it always did.
const APP_WITHOUT_LIST_MS = 300;
const { client, firstProjects } = startClient();
const root = document.getElementById("root");
if (root) {
  let mounted = false;
  let firstList: ProjectListResult | undefined;
  let loading = false;
  const loadApp = () => {
    if (loading) return;
    loading = true;
    const app = import("./mount");
    const messages = loadMessages(lang).catch(() => undefined);
    void Promise.all([app, messages]).then(([{ mount }]) => {
      markStartup("page.messages");
      mounted = true;
      mount(root, { client, lang, theme, firstProjects, firstList });
    });
  };
  // With the sidebar hidden the list is not on the first screen: no frame to paint.
  const frameWanted = initialSidebar();
  if (frameWanted) setTimeout(loadApp, APP_WITHOUT_LIST_MS);
  else loadApp();
  void firstProjects.then(
    (list) => {
      firstList = list;
      if (mounted || !frameWanted) return loadApp();
      const mod = modKeyLabel(navigator.platform);
      const takeOver = showFirstFrame(root, firstFrame({ lang, list, mod, now: Date.now(), lastProject: lastProject(), panelTab: initialPanelTab(["drafts", "ai"], "") }));
      markStartup("page.static");
      afterFirstScreen(takeOver);
      void staticFrameShown().then(loadApp);
    },
    loadApp,
  );
}
