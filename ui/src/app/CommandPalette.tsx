import { useEffect, useMemo, useRef, useState } from "react";
import { useApp } from "../shared/context";
import { loadMessages, type MessageId, messagesLoaded, translate, useMessagesGeneration } from "../shared/i18n";

export interface Command {
  id: string;
  label: string;
  /** Extra words to match. */
  keywords?: string;
  /** Its name's id: the English name matches too, in every language (a person who knows
   * the English word finds the command in the Chinese UI). Read while filtering, as the
   * English catalog may arrive after the palette opened. */
  name?: MessageId;
  shortcut?: string;
  run: () => void;
}

export function filterCommands(commands: Command[], query: string): Command[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return commands;
  return commands.filter((c) => {
    const english = c.name && messagesLoaded("en") ? translate("en", c.name) : "";
    const hay = `${c.label} ${c.keywords ?? ""} ${english}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export function CommandPalette({ commands, onClose }: { commands: Command[]; onClose: () => void }) {
  const { t } = useApp();
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  // The English names come with the English catalog, loaded when the palette first opens
  // in another language; the list filters again when it arrives.
  const generation = useMessagesGeneration();
  useEffect(() => void loadMessages("en").catch(() => undefined), []);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the English names arrive with a catalog
  const shown = useMemo(() => filterCommands(commands, query), [commands, query, generation]);
  const run = (c: Command | undefined) => {
    if (!c) return;
    onClose();
    setTimeout(c.run, 0);
  };
  // Enter before the English catalog is in: the choice waits for it (an English word typed
  // in the Chinese UI would match nothing yet).
  const waiting = useRef(false);
  const runChosen = () => {
    if (messagesLoaded("en")) return run(shown[active]);
    if (waiting.current) return;
    waiting.current = true;
    const q = query;
    const at = active;
    void loadMessages("en")
      .catch(() => undefined)
      .then(() => {
        const now = filterCommands(commands, q);
        run(now[Math.min(at, now.length - 1)]);
      });
  };
  return (
    <div className="backdrop palette-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="palette" role="dialog" aria-modal="true" aria-label={t("palette.title")} data-testid="palette">
        <input
          autoFocus
          data-testid="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={shown[active] ? `cmd-${shown[active].id}` : undefined}
          placeholder={t("palette.placeholder")}
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.nativeEvent.isComposing || e.keyCode === 229) return;
            if (e.key === "ArrowDown") {
              e.preventDefault();
              setActive((a) => Math.min(a + 1, shown.length - 1));
            } else if (e.key === "ArrowUp") {
              e.preventDefault();
              setActive((a) => Math.max(a - 1, 0));
            } else if (e.key === "Enter") {
              e.preventDefault();
              runChosen();
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              onClose();
            }
          }}
        />
        <ul id="palette-list" role="listbox" className="palette-list">
          {shown.slice(0, 50).map((c, i) => (
            <li
              key={c.id}
              id={`cmd-${c.id}`}
              role="option"
              aria-selected={i === active}
              data-testid="palette-item"
              onMouseMove={() => setActive(i)}
              onMouseDown={(e) => {
                e.preventDefault();
                run(c);
              }}
            >
              <span>{c.label}</span>
              {c.shortcut && <kbd>{c.shortcut}</kbd>}
            </li>
          ))}
          {shown.length === 0 && <li className="muted pad">{t("palette.none")}</li>}
        </ul>
      </div>
    </div>
  );
}
