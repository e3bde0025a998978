// Every keyboard shortcut, listed once for Help. The handlers live where the keys act
// (the app shell, the composer, the review bars); App.test and the feature tests check
// that each key listed here does what its line says.
import type { MessageId } from "../../shared/i18n";

export interface Shortcut {
  /** The keys, with `Mod` for Ctrl (Cmd on macOS). */
  keys: string;
  what: MessageId;
}

export interface ShortcutGroup {
  title: MessageId;
  items: Shortcut[];
}

export const SHORTCUTS: ShortcutGroup[] = [
  {
    title: "help.shortcuts.anywhere",
    items: [
      { keys: "Mod+K", what: "help.key.palette" },
      { keys: "Mod+N", what: "help.key.new" },
      { keys: "Mod+\\", what: "help.key.sidebar" },
      { keys: "Mod+Shift+D", what: "help.key.dashboard" },
      { keys: "F1 / Mod+/", what: "help.key.help" },
      { keys: "Esc", what: "help.key.close" },
    ],
  },
  {
    title: "help.shortcuts.project",
    items: [
      { keys: "Mod+S", what: "help.key.save" },
      { keys: "Mod+Shift+O", what: "help.key.optimize" },
      { keys: "Mod+1 … Mod+5", what: "help.key.tabs" },
      { keys: "Mod+J", what: "help.key.ai" },
    ],
  },
  {
    title: "help.shortcuts.ai",
    items: [
      { keys: "Enter", what: "help.key.send" },
      { keys: "Shift+Enter", what: "help.key.newline" },
    ],
  },
  {
    title: "help.shortcuts.review",
    items: [
      { keys: "Tab / Shift+Tab", what: "help.key.move" },
      { keys: "Enter", what: "help.key.accept" },
      { keys: "Delete / Backspace", what: "help.key.reject" },
    ],
  },
];

/** `keys` as this computer writes them (`Mod` → Ctrl or ⌘). */
export const keysFor = (keys: string, mod: string) => keys.replaceAll("Mod", mod);
