// The resolution of a sync conflict: the person's side, the server's side and the
// common base. A clean three-way merge can be taken as it is; where the edits overlap
// the person edits the result (prefilled with their side). Every choice makes a new
// version; nothing is overwritten.

import { useState } from "react";
import { toClientError, type ClientError } from "../api/client";
import type { SyncConflict, SyncResolveChoice } from "../api/generated";
import { Dialog } from "../components/Dialog";
import { ErrorBanner } from "../components/ErrorBanner";
import { useApp } from "../context";

export function ConflictView({ conflict, onClose, onResolved }: { conflict: SyncConflict; onClose: () => void; onResolved: () => void }) {
  const { client, t, toast } = useApp();
  const [text, setText] = useState(conflict.merged?.source ?? conflict.mine.source);
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  const resolve = async (choice: SyncResolveChoice) => {
    setBusy(true);
    setError(null);
    try {
      const params =
        choice === "edited" ? { conflictId: conflict.id, choice, title: conflict.merged?.title ?? conflict.mine.title, source: text } : { conflictId: conflict.id, choice };
      const result = await client.call("sync.resolve", params);
      toast(t("sync.resolved", { n: result.version.number }));
      onResolved();
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={t("sync.conflictTitle")} onClose={onClose} testId="sync-conflict" wide>
      <p className="small">{conflict.kind === "push" ? t("sync.conflictPush") : t("sync.conflictPull")}</p>
      <div className="conflict-sides">
        <section>
          <h4>{t("sync.mine")}</h4>
          <pre data-testid="conflict-mine">{conflict.mine.source}</pre>
        </section>
        <section>
          <h4>{t("sync.theirs", { author: conflict.theirs.author })}</h4>
          <pre data-testid="conflict-theirs">{conflict.theirs.source}</pre>
        </section>
      </div>
      {conflict.merged ? (
        <p className="small" data-testid="conflict-clean">
          {t("sync.mergesCleanly")}
        </p>
      ) : (
        <p className="small warning" data-testid="conflict-overlaps">
          {t("sync.overlaps", { n: conflict.overlaps.length })}
        </p>
      )}
      <label className="field">
        <span className="small muted">{t("sync.result")}</span>
        <textarea data-testid="conflict-result" rows={10} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <div className="row">
        {conflict.merged && (
          <button type="button" className="primary" disabled={busy} data-testid="conflict-merged" onClick={() => void resolve("merged")}>
            {t("sync.takeMerged")}
          </button>
        )}
        <button type="button" disabled={busy} data-testid="conflict-edited" onClick={() => void resolve("edited")}>
          {t("sync.takeEdited")}
        </button>
        <button type="button" disabled={busy} data-testid="conflict-mine-btn" onClick={() => void resolve("mine")}>
          {t("sync.keepMine")}
        </button>
        <button type="button" disabled={busy} data-testid="conflict-theirs-btn" onClick={() => void resolve("theirs")}>
          {t("sync.takeTheirs")}
        </button>
      </div>
    </Dialog>
  );
}
