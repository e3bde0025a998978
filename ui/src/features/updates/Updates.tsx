// Updates: the feed a distributor configured is asked once, a moment after the first
// screen (a feed that is down shows nothing and slows nothing); a newer version shows as
// a small notice, dismissible per version, and in Help → About with what changed and how
// to get it. An AppImage installs it (the engine checks the signature against the key
// built into the app) and offers a restart; a .deb or .rpm says how to get it.
import { useEffect, useState } from "react";
import { appRestarter, toClientError } from "../../shared/api/client";
import type { UpdateCheck, UpdateInstalled } from "../../shared/api/generated";
import { useMethod, useWrite } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { dismissUpdateNotice, updateNoticeDismissed } from "../../shared/lib/prefs";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";

/** How long after the first screen the background check starts. */
export const CHECK_DELAY_MS = 3000;

type Available = Extract<UpdateCheck, { type: "available" }>;

/** A small notice when the feed offers a newer version; nothing otherwise. */
export function UpdateNotice({ onDetails, delayMs = CHECK_DELAY_MS }: { onDetails: () => void; delayMs?: number }) {
  const { t } = useApp();
  const [due, setDue] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setDue(true), delayMs);
    return () => clearTimeout(timer);
  }, [delayMs]);
  // Errors (a feed that is down, slow, or not a feed) are not shown here: Help → About
  // says them when asked.
  const check = useMethod("update.check", {}, { enabled: due, refetchOnMount: false });
  const [dismissed, setDismissed] = useState<string | null>(null);
  const offer = check.data?.type === "available" ? check.data : null;
  if (!offer || dismissed === offer.version || updateNoticeDismissed(offer.version)) return null;
  const close = () => {
    dismissUpdateNotice(offer.version);
    setDismissed(offer.version);
  };
  return (
    <aside className="update-notice" role="status" data-testid="update-notice" aria-label={t("update.notice.title", { version: offer.version })}>
      <p className="update-notice-title">{t("update.notice.title", { version: offer.version })}</p>
      <p className="small muted">{t("update.notice.body", { current: offer.currentVersion })}</p>
      <div className="update-notice-actions">
        <button
          type="button"
          className="primary"
          data-testid="update-notice-details"
          onClick={() => {
            close();
            onDetails();
          }}
        >
          {t("update.notice.details")}
        </button>
        <button type="button" data-testid="update-notice-dismiss" onClick={close}>
          {t("update.notice.later")}
        </button>
      </div>
    </aside>
  );
}

/** Help → About's updates: the feed's answer, what changed, and how to get it. */
export function UpdateSection() {
  const { t } = useApp();
  const check = useMethod("update.check", {}, { refetchOnMount: false });
  const [installed, setInstalled] = useState<UpdateInstalled | null>(null);
  // Kept beside the install button on purpose: Help → About is a dialog, and a failed
  // install or restart is read with the update it is about.
  const [installError, setInstallError] = useState<unknown>(null);
  const install = useWrite("update.install", { onError: setInstallError });
  const restart = appRestarter();
  let body;
  if (installed) {
    body = (
      <div data-testid="update-installed">
        <p>{t("update.about.installed", { version: installed.version })}</p>
        {restart ? (
          <button type="button" className="primary" data-testid="update-restart" onClick={() => void restart().catch(setInstallError)}>
            {t("update.about.restart")}
          </button>
        ) : (
          <p className="muted small">{t("update.about.restartLater")}</p>
        )}
      </div>
    );
  } else if (check.error) {
    body = (
      <div data-testid="update-failed">
        <p className="muted">{t("update.about.failed")}</p>
        <ErrorBanner error={toClientError(check.error)} retry={() => void check.refetch()} />
      </div>
    );
  } else if (!check.data || check.isFetching) {
    body = (
      <p className="muted" aria-busy="true" data-testid="update-checking">
        {t("update.about.checking")}
      </p>
    );
  } else if (check.data.type === "off") {
    body = (
      <p className="muted" data-testid="update-off">
        {t("update.about.off")}
      </p>
    );
  } else if (check.data.type === "upToDate") {
    body = (
      <p data-testid="update-current">
        {t("update.about.upToDate", { version: check.data.latestVersion })}{" "}
        <button type="button" className="small-btn" data-testid="update-check" onClick={() => void check.refetch()}>
          {t("update.about.check")}
        </button>
      </p>
    );
  } else {
    const offer = check.data;
    body = (
      <div data-testid="update-available">
        <p>
          <strong>{t("update.about.available", { version: offer.version, current: offer.currentVersion })}</strong>
          {offer.pubDate && <span className="muted small"> · {t("update.about.published", { date: offer.pubDate.slice(0, 10) })}</span>}
        </p>
        {offer.notes && (
          <>
            <h4>{t("update.about.notes")}</h4>
            <pre className="update-notes" data-testid="update-notes">
              {offer.notes}
            </pre>
          </>
        )}
        <HowToGet
          offer={offer}
          installing={install.isPending}
          onInstall={() => {
            setInstallError(null);
            void install.run({ version: offer.version }).then((r) => r && setInstalled(r));
          }}
        />
      </div>
    );
  }
  return (
    <section className="update-section" data-testid="help-updates">
      <h3>{t("update.about.heading")}</h3>
      {body}
      {installError !== null && <ErrorBanner error={toClientError(installError)} onDismiss={() => setInstallError(null)} />}
    </section>
  );
}

function HowToGet({ offer, installing, onInstall }: { offer: Available; installing: boolean; onInstall: () => void }) {
  const { t } = useApp();
  const how = offer.how;
  if (how.type === "install") {
    return (
      <div>
        <p className="muted small">{t("update.about.verified")}</p>
        <button type="button" className="primary" data-testid="update-install" disabled={installing} onClick={onInstall}>
          {installing ? t("update.about.installing") : t("update.about.install")}
        </button>
      </div>
    );
  }
  if (how.type === "packageManager") {
    const file = how.url?.split("/").pop() ?? (how.package === "rpm" ? "inkstone.rpm" : "inkstone.deb");
    const command = how.package === "rpm" ? `sudo dnf install ./${file}` : `sudo apt install ./${file}`;
    return (
      <div data-testid="update-package-manager">
        <p>{t(how.package === "rpm" ? "update.about.rpm" : "update.about.deb")}</p>
        {how.url && (
          <p>
            <a href={how.url} target="_blank" rel="noreferrer" data-testid="update-download">
              {how.url}
            </a>
          </p>
        )}
        <pre className="update-command">{command}</pre>
      </div>
    );
  }
  return how.url ? (
    <p data-testid="update-download-only">
      {t("update.about.download")}{" "}
      <a href={how.url} target="_blank" rel="noreferrer" data-testid="update-download">
        {how.url}
      </a>
    </p>
  ) : (
    <p className="muted">{t("update.about.noDownload")}</p>
  );
}
