// What the AI panel shows instead of a session: the offer to set up a model (with a
// model server found on this computer), and the archived project's notice.
import type { LocalServer } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";

/** In place of the composer (and of an approval or question) while the project is
 * archived: why nothing can be sent, and the way out. */
export function ArchivedProjectNotice({ onRestore }: { onRestore?: () => void }) {
  const { t } = useApp();
  return (
    <div className="composer archived-project" data-testid="ai-project-archived" role="status">
      <p className="small muted">{t("ai.projectArchived.body")}</p>
      {onRestore && (
        <button type="button" className="small-btn" data-testid="ai-restore-project" onClick={onRestore}>
          {t("ai.projectArchived.restore")}
        </button>
      )}
    </div>
  );
}

/** No model yet: set one up, and offer a model server found on this computer. */
export function ModelSetupOffer({ onSetUp, onRecheck }: { onSetUp: () => void; onRecheck: () => void }) {
  const { t } = useApp();
  const detect = useMethod("llmProfile.detectLocal", {});
  const found: LocalServer[] | null = detect.isPending ? null : (detect.data?.found ?? []);
  return (
    <div className="empty" data-testid="ai-setup">
      <p className="empty-title">{t("ai.setup.title")}</p>
      <p className="muted">{t("ai.setup.body")}</p>
      {found === null && (
        <p className="small muted" role="status">
          <span className="spinner" aria-hidden="true" /> {t("ai.setup.detecting")}
        </p>
      )}
      {found?.map((s) => (
        <div key={s.preset.id} className="detected" data-testid="ai-setup-local">
          <p className="small">{t("localOffer.body", { name: s.preset.label, url: s.preset.baseUrl, n: s.models.length })}</p>
          <button type="button" className="primary" onClick={onSetUp}>
            {t("ai.setup.useLocal", { name: s.preset.label })}
          </button>
        </div>
      ))}
      <div className="row">
        <button type="button" className={found?.length ? "" : "primary"} data-testid="ai-setup-open" onClick={onSetUp}>
          {t("ai.setup.open")}
        </button>
        <button type="button" onClick={onRecheck}>
          {t("ai.setup.recheck")}
        </button>
      </div>
    </div>
  );
}
