// The first screen is the project list: once it is painted, the shell hears of it, and
// what the list does not need starts: the brands and templates, the local model offer,
// and (a moment later) the code of what is not on the first screen, so opening a
// project, the palette, a new project or the dashboard is instant.
import { useEffect, useState } from "react";
import { afterFirstScreen, firstScreenShown } from "../shared/lib/startup";
import { preloadRest } from "./deferred";

/** Whether the first screen is painted (what it does not need may show now). */
export function useFirstScreen(listed: boolean, loadLibrary: () => Promise<void>): boolean {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!listed) return;
    firstScreenShown();
    return afterFirstScreen(() => setShown(true));
  }, [listed]);
  useEffect(() => {
    if (!shown) return;
    void loadLibrary();
    const idle = setTimeout(preloadRest, 300);
    return () => clearTimeout(idle);
  }, [shown, loadLibrary]);
  return shown;
}
