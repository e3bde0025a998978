// One model profile in Settings → AI models: its health, window, key state, test
// result and actions.
import type { ClientError } from "../../shared/api/client";
import type { LlmProfile, LlmTestResult, SchemaForm } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { describeError, describeHint, formatFullTime, formatTime, type MessageId } from "../../shared/i18n";
import { DeleteButton } from "./DeleteButton";
import { maskedFingerprint, modelLabel } from "./llm";

export type TestState = { state: "running" } | { state: "done"; result: LlmTestResult } | { state: "error"; error: ClientError };
export function ProfileRow({
  profile: p,
  test,
  keyGone,
  envKeyActive,
  deleting,
  onTest,
  onEdit,
  onSetKey,
  onDefault,
  onAskDelete,
  onCancelDelete,
  onDelete,
}: {
  profile: LlmProfile;
  test: TestState | undefined;
  /** Its saved key is no longer in the system keychain. */
  keyGone: boolean;
  envKeyActive: boolean;
  deleting: boolean;
  onTest: () => void;
  onEdit: () => void;
  onSetKey: () => void;
  onDefault: () => void;
  onAskDelete: () => void;
  onCancelDelete: () => void;
  onDelete: () => void;
}) {
  const { t, lang, now } = useApp();
  const running = test?.state === "running";
  // A call with this profile would fail before sending anything: say so, with the way out.
  const needsKey = !envKeyActive && (keyGone || (p.keyRequired && !p.keyFingerprint));
  const lastError = p.health === "failed" && p.lastError ? describeError(lang, { ...p.lastError, hints: [] }) : null;
  return (
    <li className="profile" data-testid="profile-item" data-name={p.name} data-health={p.health}>
      <div className="row between">
        <span className="profile-title">
          <strong>{p.name}</strong>
          {p.isDefault && <span className="badge badge-default">{t("models.default")}</span>}
          {p.provider === "disabled" && <span className="badge">{t("models.disabled")}</span>}
          <span
            className={`badge health health-${p.health}`}
            data-testid="health"
            title={p.lastTestedAt ? t("models.lastTested", { time: formatFullTime(lang, p.lastTestedAt) }) : undefined}
          >
            {t(`health.${p.health}` as MessageId)}
          </span>
        </span>
        <span className="profile-actions">
          <button type="button" className="small-btn" data-testid="profile-test" disabled={running} onClick={onTest}>
            {t("models.test")}
          </button>
          <button type="button" className="link" data-testid="profile-edit" onClick={onEdit}>
            {t("common.edit")}
          </button>
          {!p.isDefault && (
            <button type="button" className="link" data-testid="profile-default" onClick={onDefault}>
              {t("models.makeDefault")}
            </button>
          )}
          <DeleteButton name={p.name} asking={deleting} onAsk={onAskDelete} onCancel={onCancelDelete} onConfirm={onDelete} testId="profile-delete" />
        </span>
      </div>
      <div className="small muted profile-meta">
        <code>{p.baseUrl}</code> ·{" "}
        <span data-testid="profile-model-name" title={p.model}>
          {modelLabel(p.model)}
        </span>{" "}
        ·{" "}
        {p.keyFingerprint && keyGone && !envKeyActive ? (
          <span className="warning-text" data-testid="key-gone">
            {t("models.keyGone", { fp: maskedFingerprint(p.keyFingerprint) })}
          </span>
        ) : p.keyFingerprint ? (
          <span data-testid="key-fingerprint">{t("models.keyStored", { fp: maskedFingerprint(p.keyFingerprint) })}</span>
        ) : p.keyRequired ? (
          <span className="warning-text" data-testid="key-missing">
            {t("models.keyMissing")}
          </span>
        ) : (
          t("models.noKeyNeeded")
        )}
        {needsKey && (
          <>
            {" "}
            <button type="button" className="link" data-testid="profile-set-key" onClick={onSetKey}>
              {t("models.setKey")}
            </button>
          </>
        )}
      </div>
      <WindowLine profile={p} />
      <FormLine profile={p} />
      <div className="small muted">
        {p.lastTestedAt
          ? t(p.health === "ok" && p.lastLatencyMs !== undefined ? "models.testedOk" : "models.testedAt", {
              time: formatTime(lang, p.lastTestedAt, now()),
              ms: p.lastLatencyMs ?? 0,
            })
          : t("models.neverTested")}
        {lastError && test?.state !== "done" && (
          <span className="danger-text">
            {" "}
            · {lastError.title}
            {lastError.details[0] ? ` ${lastError.details[0]}` : ""}
          </span>
        )}
      </div>
      {running && (
        <p className="progress small muted" role="status" data-testid="test-running">
          <span className="spinner" aria-hidden="true" /> {t("models.testing", { url: p.baseUrl })}
        </p>
      )}
      {test?.state === "done" && <TestResult result={test.result} />}
      {/* The connection test's failure is its result, shown in the row it tested (with
          a retry), as a passing test's is; a failed write goes to the app's banner. */}
      {test?.state === "error" && <ErrorBanner error={test.error} retry={onTest} />}
    </li>
  );
}

/** A profile's context window and where it comes from; a warning when the person's
 * figure and the server's differ. */
function WindowLine({ profile: p }: { profile: LlmProfile }) {
  const { t } = useApp();
  const server = p.serverWindow;
  const source = server ? t(`models.windowSource.${server.source}` as MessageId) : "";
  const origin = p.contextWindowOrigin;
  const exact = server !== undefined && server.source !== "ollamaModelMax" && server.source !== "lmStudioModelMax";
  if (origin === "person" && server && exact && server.tokens !== p.contextWindow) {
    return (
      <div className="small warning-text" data-testid="profile-window" data-origin={origin} data-disagrees="true">
        {t("models.windowDisagrees", { configured: p.contextWindow, server: server.tokens, source })}
      </div>
    );
  }
  const text =
    origin === "server" && server
      ? t("models.windowServer", { tokens: p.contextWindow, source })
      : origin === "assumed"
        ? server
          ? t("models.windowAssumedMax", { tokens: p.contextWindow, max: server.tokens, source })
          : t("models.windowAssumed", { tokens: p.contextWindow })
        : t("models.windowPerson", { tokens: p.contextWindow });
  return (
    <div className="small muted" data-testid="profile-window" data-origin={origin}>
      {text}
    </div>
  );
}

/** The structured-output form the profile's calls use, and how it was learnt: at the
 * test, from a refusal at work, or assumed from the settings. */
function FormLine({ profile: p }: { profile: LlmProfile }) {
  const { t } = useApp();
  const found = p.structuredForm;
  const name = (form: SchemaForm) => t(`models.form.${form}` as MessageId);
  const form: SchemaForm = found?.form ?? (p.supportsJsonSchema ? p.schemaForm : "instructions");
  const refused = (found?.refused ?? []).map((r) => name(r.form)).join(", ");
  const text = !found
    ? t("models.formSettings", { form: name(form) })
    : found.source === "refusal"
      ? t("models.formRefusal", { form: name(form), refused })
      : refused
        ? t("models.formTestedRefused", { form: name(form), refused })
        : t("models.formTested", { form: name(form) });
  return (
    <div className="small muted" data-testid="profile-structured-form" data-form={form} data-source={found?.source ?? "settings"}>
      {text}
    </div>
  );
}

function TestResult({ result }: { result: LlmTestResult }) {
  const { t, lang } = useApp();
  if (result.ok) {
    return (
      <>
        <p className="test-result test-ok" role="status" data-testid="test-result" data-ok="true">
          ✓ {t("models.testOk", { model: modelLabel(result.modelId ?? result.profile.model), ms: result.latencyMs ?? 0 })}
        </p>
        {(result.warnings ?? []).map((w) => (
          <p key={w.id} className="small warning-text" data-testid="test-warning" data-id={w.id}>
            {describeHint(lang, w)}
          </p>
        ))}
      </>
    );
  }
  const error = result.error ?? { code: "INTERNAL" as const, message: "", hints: [] };
  const { title, details } = describeError(lang, error);
  return (
    <div className="test-result test-failed" role="alert" data-testid="test-result" data-ok="false" data-code={error.code}>
      <p className="error-title">✕ {title}</p>
      {details.map((d) => (
        <p key={d} className="small">
          {d}
        </p>
      ))}
    </div>
  );
}

// ---------------------------------------------------------------------------
// The add / edit form

