import { useMemo, useState } from "react";
import { useApp } from "../shared/context";

export interface Command {
  id: string;
  label: string;
  /** Extra words to match (e.g. the English name in the Chinese UI). */
  keywords?: string;
  shortcut?: string;
  run: () => void;
}

export function filterCommands(commands: Command[], query: string): Command[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return commands;
  return commands.filter((c) => {
    const hay = `${c.label} ${c.keywords ?? ""}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

export function CommandPalette({ commands, onClose }: { commands: Command[]; onClose: () => void }) {
  const { t } = useApp();
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const shown = useMemo(() => filterCommands(commands, query), [commands, query]);
  const run = (c: Command | undefined) => {
    if (!c) return;
    onClose();
    setTimeout(c.run, 0);
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
              run(shown[active]);
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
