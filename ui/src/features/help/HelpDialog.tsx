// Help: About (version, system, the data and log folders, each openable in the desktop
// app and copyable everywhere), the keyboard shortcut list, and Report a problem (a text
// the engine collects — version, system, folders, the last log lines with anything that
// looks like a key replaced — shown in full to read before copying; nothing is sent).
import { Fragment, useState } from "react";
import { folderOpener, toClientError } from "../../shared/api/client";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { UpdateSection } from "../updates";
import type { MessageId } from "../../shared/i18n";
import { keysFor, SHORTCUTS } from "./shortcuts";

export type HelpTab = "about" | "shortcuts" | "report";
const TABS: HelpTab[] = ["about", "shortcuts", "report"];

export function HelpDialog({ tab, onTab, onClose }: { tab: HelpTab; onTab: (tab: HelpTab) => void; onClose: () => void }) {
  const { t } = useApp();
  return (
    <Dialog title={t("help.title")} onClose={onClose} testId="help" wide>
      <div className="settings">
        <nav
          className="settings-nav"
          role="tablist"
          aria-label={t("help.title")}
          onKeyDown={(e) => {
            if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
            e.preventDefault();
            const next = TABS[(TABS.indexOf(tab) + (e.key === "ArrowDown" ? 1 : TABS.length - 1)) % TABS.length];
            onTab(next);
            (e.currentTarget.querySelector(`[data-testid=help-${next}]`) as HTMLElement | null)?.focus();
          }}
        >
          {TABS.map((s) => (
            <button key={s} type="button" role="tab" aria-selected={tab === s} data-testid={`help-${s}`} onClick={() => onTab(s)}>
              {t(`help.tab.${s}` as MessageId)}
            </button>
          ))}
        </nav>
        <div className="settings-body">
          {tab === "about" && <About />}
          {tab === "shortcuts" && <Shortcuts />}
          {tab === "report" && <Report />}
        </div>
      </div>
    </Dialog>
  );
}

function About() {
  const { t, toast } = useApp();
  const info = useMethod("app.info", {}, { refetchOnMount: false });
  const open = folderOpener();
  // A folder that would not open is said here, in the dialog beside its path (no write).
  const [error, setError] = useState<unknown>(null);
  if (info.error) return <ErrorBanner error={toClientError(info.error)} retry={() => void info.refetch()} />;
  const i = info.data;
  if (!i) return <p className="muted">…</p>;
  const copy = (path: string) =>
    navigator.clipboard?.writeText(path).then(
      () => toast(t("help.about.copied")),
      () => toast(t("help.report.copyFailed")),
    );
  const folder = (label: MessageId, which: "data" | "logs", path: string) => (
    <>
      <dt>{t(label)}</dt>
      <dd>
        <code data-testid={`help-path-${which}`}>{path}</code>{" "}
        {open && (
          <button type="button" className="small-btn" data-testid={`help-open-${which}`} onClick={() => void open(which).catch(setError)}>
            {t("help.about.open")}
          </button>
        )}{" "}
        <button type="button" className="small-btn" data-testid={`help-copy-${which}`} onClick={() => void copy(path)}>
          {t("help.about.copy")}
        </button>
      </dd>
    </>
  );
  return (
    <section data-testid="help-about-body">
      <h3>Inkstone</h3>
      <dl className="keys">
        <dt>{t("help.about.version")}</dt>
        <dd data-testid="help-version">{i.version}</dd>
        <dt>{t("help.about.system")}</dt>
        <dd>{i.os}</dd>
        {folder("help.about.data", "data", i.dataDir)}
        {i.logDir ? (
          folder("help.about.logs", "logs", i.logDir)
        ) : (
          <>
            <dt>{t("help.about.logs")}</dt>
            <dd className="muted">{t("help.about.logs.none")}</dd>
          </>
        )}
        <dt>{t("help.about.schema")}</dt>
        <dd>{i.schemaVersion}</dd>
      </dl>
      <p className="muted small">{t("help.about.note")}</p>
      {error !== null && <ErrorBanner error={toClientError(error)} onDismiss={() => setError(null)} />}
      <UpdateSection />
    </section>
  );
}

function Shortcuts() {
  const { t, mod } = useApp();
  return (
    <section data-testid="help-shortcuts-body">
      {SHORTCUTS.map((group) => (
        <div key={group.title}>
          <h3>{t(group.title)}</h3>
          <dl className="keys">
            {group.items.map((s) => (
              <Fragment key={`${group.title}-${s.keys}`}>
                <dt>
                  <kbd>{keysFor(s.keys, mod)}</kbd>
                </dt>
                <dd>{t(s.what)}</dd>
              </Fragment>
            ))}
          </dl>
        </div>
      ))}
    </section>
  );
}

function Report() {
  const { t, toast } = useApp();
  // Collected afresh each time the tab opens: the log has moved on.
  const report = useMethod("app.report", {});
  if (report.error) return <ErrorBanner error={toClientError(report.error)} retry={() => void report.refetch()} />;
  const r = report.data;
  if (!r) return <p className="muted" aria-busy="true">{t("help.report.loading")}</p>;
  const copy = () =>
    navigator.clipboard?.writeText(r.text).then(
      () => toast(t("help.report.copied")),
      () => toast(t("help.report.copyFailed")),
    ) ?? toast(t("help.report.copyFailed"));
  return (
    <section data-testid="help-report-body">
      <p className="muted">{t("help.report.intro")}</p>
      <p className="small" data-testid="help-report-scrubbed">
        {t("help.report.scrubbed", { n: r.scrubbedLines })}
      </p>
      <textarea readOnly className="report-text" data-testid="help-report-text" rows={16} value={r.text} aria-label={t("help.tab.report")} />
      <div className="row">
        <button type="button" className="primary" data-testid="help-report-copy" onClick={() => void copy()}>
          {t("help.report.copy")}
        </button>
      </div>
    </section>
  );
}
