// The project screen's smaller pieces: the top bar, the status bar, the sync-conflict bar
// and the two dialogs (save a version, restore one).
import { type ReactNode, Suspense, useState } from "react";
import type { BrandProfile, Project, SyncConflictView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { TextCount } from "../../shared/lib/wordcount";
import { Dialog } from "../../shared/ui/Dialog";
import { StatusAi, type Drafting } from "../drafting";
import { ConflictView, useSync } from "../sync";
import type { ConflictCause } from "./Overlays";
import type { SaveState } from "./saver";

export function TopBar({
  leading,
  project,
  brands,
  preview,
  onBrand,
  onOptimize,
  onTogglePreview,
  onSaveVersion,
}: {
  leading?: ReactNode;
  project: Project;
  brands: BrandProfile[];
  preview: boolean;
  onBrand: (id: string) => void;
  onOptimize: () => void;
  onTogglePreview: () => void;
  onSaveVersion: () => void;
}) {
  const { t, mod } = useApp();
  return (
    <div className="topbar">
      {leading}
      <label className="small muted brand-pick">
        <span>{t("brand.label")}</span>
        <select
          value={project.brandProfileId ?? ""}
          // The closed select is cut to the bar's width; the whole name shows on hover.
          title={brands.find((b) => b.id === project.brandProfileId)?.name}
          onChange={(e) => onBrand(e.target.value)}
          data-testid="brand-select"
        >
          <option value="">{t("brand.none")}</option>
          {brands.map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
        </select>
      </label>
      {project.archived && <span className="badge">{t("project.archivedBadge")}</span>}
      <button type="button" data-testid="optimize-open" title={`${mod}+Shift+O`} onClick={onOptimize}>
        {t("ai.optimize")} <kbd className="hint-long">{mod}+Shift+O</kbd>
      </button>
      <button type="button" aria-pressed={preview} data-testid="toggle-preview" onClick={onTogglePreview}>
        {t("preview.toggle")}
      </button>
      <button type="button" className="primary" data-testid="save-version" title={`${mod}+S`} onClick={onSaveVersion}>
        {t("version.save")} <kbd className="on-accent">{mod}+S</kbd>
      </button>
    </div>
  );
}

export function StatusBar({
  saveState,
  cause,
  head,
  words,
  busy,
  drafting,
}: {
  saveState: SaveState;
  cause: ConflictCause;
  head: number;
  words: TextCount;
  busy: string | null;
  drafting: Drafting;
}) {
  const { t, lang } = useApp();
  const saveLabel = {
    saved: t("status.saved"),
    dirty: t("status.dirty"),
    saving: t("status.saving"),
    conflict: cause.kind === "teammate" ? t("status.conflictTeammate") : t("status.conflict"),
    error: t("status.error"),
  }[saveState];
  return (
    <footer className="statusbar" data-testid="statusbar">
      <span data-testid="save-state" data-state={saveState} className={`save-${saveState}`}>
        {saveLabel}
      </span>
      <span aria-hidden="true">·</span>
      <span data-testid="head">{head > 0 ? t("project.head", { n: head }) : t("project.head.none")}</span>
      <span aria-hidden="true">·</span>
      <span data-testid="word-count" data-unit={words.unit} title={t(words.unit === "chars" ? "status.chars.help" : "status.words.help")}>
        {t(`status.${words.unit}` as MessageId, { n: words.n.toLocaleString(lang === "zh" ? "zh-CN" : "en") })}
      </span>
      <StatusAi drafting={drafting} />
      {busy && (
        <span className="busy" role="status" data-testid="busy">
          <span className="spinner" aria-hidden="true" /> {busy}
        </span>
      )}
    </footer>
  );
}

export function RestoreDialog({ n, onConfirm, onClose }: { n: number; onConfirm: () => void; onClose: () => void }) {
  const { t } = useApp();
  return (
    <Dialog title={t("restore.title", { n })} onClose={onClose} testId="restore-dialog">
      <p>{t("restore.body")}</p>
      <div className="row end">
        <button type="button" onClick={onClose}>
          {t("common.cancel")}
        </button>
        <button type="button" className="primary" data-testid="restore-confirm" data-autofocus onClick={onConfirm}>
          {t("restore.confirm", { n })}
        </button>
      </div>
    </Dialog>
  );
}

/** An open sync conflict of this project: said above the editor, with the way to resolve it
 * (the sidebar's sync popover lists it too, but the sidebar may be hidden). */
export function SyncConflictBar({ projectId, flush }: { projectId: string; flush: () => Promise<void> }) {
  const { t } = useApp();
  const { snap, store } = useSync();
  const [resolving, setResolving] = useState<SyncConflictView | null>(null);
  const c = snap.conflicts.find((x) => x.projectId === projectId && x.state === "open");
  return (
    <>
      {c && (
        <div className="warning sync-conflict-bar" role="status" data-testid="sync-conflict-bar">
          <span>{t("sync.conflictBar", { author: c.theirs.author, n: c.theirs.localNumber ?? c.theirs.serverNumber ?? 0 })}</span>
          <button
            type="button"
            data-testid="sync-conflict-bar-resolve"
            onClick={async () => {
              // What is on screen is part of the person's side.
              await flush().catch(() => undefined);
              setResolving(c);
            }}
          >
            {t("sync.conflictBar.resolve")}
          </button>
        </div>
      )}
      {resolving && (
        <Suspense fallback={null}>
          <ConflictView
            conflict={resolving}
            onClose={() => setResolving(null)}
            onResolved={() => {
              setResolving(null);
              // The editor, History and the list follow the resolution.
              void store.changed();
            }}
          />
        </Suspense>
      )}
    </>
  );
}

export function SaveVersionDialog({ next, onSave, onClose }: { next: number; onSave: (message: string) => void; onClose: () => void }) {
  const { t } = useApp();
  const [message, setMessage] = useState("");
  return (
    <Dialog title={t("version.dialogTitle", { n: next })} onClose={onClose} testId="save-version-dialog">
      <input
        data-testid="version-message"
        placeholder={t("version.messagePlaceholder")}
        aria-label={t("version.messagePlaceholder")}
        value={message}
        onChange={(e) => setMessage(e.target.value)}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing || e.keyCode === 229) return;
          // Enter, or Ctrl/Cmd+S a second time, saves.
          const again = (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s";
          if (e.key === "Enter" || again) {
            e.preventDefault();
            e.stopPropagation();
            onSave(message);
          }
        }}
      />
      <div className="row end">
        <button type="button" onClick={onClose}>
          {t("common.cancel")}
        </button>
        <button type="button" className="primary" data-testid="version-confirm" onClick={() => onSave(message)}>
          {t("version.save")}
        </button>
      </div>
    </Dialog>
  );
}

