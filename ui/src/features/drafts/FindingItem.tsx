// One finding of a draft: its severity, what it matched and where, the message and the
// suggested fix; a finding with a span jumps to its place in the source.
import type { Finding } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { describeFinding, describeLocation, describeRoute, type MessageId } from "../../shared/i18n";

export function FindingItem({ f, onJump }: { f: Finding; onJump: (from: number, to: number, matched?: string | null) => void }) {
  const { t, lang } = useApp();
  const span = f.span;
  const text = describeFinding(lang, f);
  const head = (
    <>
      <span className={`sev sev-${f.severity}`}>{t(`drafts.severity.${f.severity}` as MessageId)}</span>
      {f.matched && <span className="finding-matched">“{f.matched}”</span>}
      {f.location && <span className="small muted">{describeLocation(lang, f.location)}</span>}
      {f.route && <span className="small muted">({describeRoute(lang, f.route)})</span>}
    </>
  );
  return (
    <li
      className={`finding finding-${f.severity}`}
      data-testid="finding"
      data-check={f.check}
      data-severity={f.severity}
      data-from={span?.from ?? ""}
      data-to={span?.to ?? ""}
    >
      {span ? (
        <button type="button" className="finding-head" title={t("drafts.jump")} data-testid="finding-jump" onClick={() => onJump(span.from, span.to, f.matched)}>
          {head}
        </button>
      ) : (
        <div className="finding-head">{head}</div>
      )}
      <p className="finding-msg small">{text.message}</p>
      {text.suggestion && (
        <p className="finding-fix small muted" title={f.params?.source ? t("drafts.limitSource", { source: f.params.source }) : undefined}>
          → {text.suggestion}
        </p>
      )}
    </li>
  );
}
