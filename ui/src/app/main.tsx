import { applyLang, applyTheme, initialLang, initialSidebar, initialPanelTab, initialTheme, lastProject } from "../shared/lib/prefs";
import "./styles.css";
import { afterFirstScreen, markStartup, staticFrameShown } from "../shared/lib/startup";
import { loadMessages, modKeyLabel } from "../shared/i18n";
import type { ProjectListResult } from "../shared/api/generated";
import { firstFrame, showFirstFrame } from "./firstFrame";
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
  let mounted = false;
  let firstList: ProjectListResult | undefined;
  /** The static first frame, once it is in the page, painted. */
  let framePainted: Promise<void> | undefined;
  // The list usually arrives well before React and the shell have loaded and rendered:
  // the entry paints it at once as a plain first frame of the shell (./firstFrame.ts),
  // which React replaces. With the sidebar hidden the list is not on the first screen.
  void firstProjects.then(
    (list) => {
      firstList = list;
      if (mounted || !initialSidebar()) return;
      const mod = modKeyLabel(navigator.platform);
      const takeOver = showFirstFrame(root, firstFrame({ lang, list, mod, now: Date.now(), lastProject: lastProject(), panelTab: initialPanelTab(["drafts", "ai"], "") }));
      markStartup("page.static");
      framePainted = staticFrameShown();
      afterFirstScreen(takeOver);
    },
    () => undefined,
  );
  void Promise.all([app, messages]).then(async ([{ mount }]) => {
    markStartup("page.messages");
    // React's render is one long task: a static frame already in the page goes to the
    // screen first. Without one, React mounts in this same step (so none comes after).
    if (framePainted) await framePainted;
    mounted = true;
    mount(root, { client, lang, theme, firstProjects, firstList });
  });
}
