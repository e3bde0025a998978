// The details of a publication: adding one, editing one, and the dialog that asks for
// them when a draft is set to published. Defaults are filled (the version, the title,
// now in the platform's time zone); the engine checks every field.
import { useState } from "react";
import type { Distribution, Platform, Publication, PublicationDetails, PublicationFormat, Visibility } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { Dialog } from "../../shared/ui/Dialog";
import { defaultZone, localTime } from "./format";
import { PlatformOptions } from "./PlatformOptions";

const FORMATS: PublicationFormat[] = ["article", "answer", "imageText", "video", "thread", "post", "other"];
const DISTRIBUTIONS: Distribution[] = ["organic", "boosted", "notified", "unnotified", "unknown"];
const VISIBILITIES: Visibility[] = ["public", "private"];

function defaultFormat(p: Platform): PublicationFormat {
  return p === "wechat" || p === "zhihu" ? "article" : p === "x" ? "post" : "imageText";
}
function defaultDistribution(p: Platform): Distribution {
  return p === "wechat" ? "notified" : "organic";
}

export interface PublicationFormProps {
  title: string;
  testId: string;
  /** Fixed for an edit and for a draft being published; chosen when adding. */
  platform: Platform;
  platformFixed: boolean;
  /** The publication being edited. */
  editing?: Publication;
  defaultVersion: number;
  defaultTitle: string;
  busy: boolean;
  /** A failed save is the caller's to report: it goes to the app's one error banner
   * (which shows above this dialog), and the form stays open with what was typed. */
  onSubmit: (platform: Platform, details: PublicationDetails) => void;
  onCancel: () => void;
  /** The draft-publishing dialog offers to set the status without recording. */
  onSkip?: () => void;
}

export function PublicationForm(props: PublicationFormProps) {
  const { t, now } = useApp();
  const e = props.editing;
  const [platform, setPlatform] = useState<Platform>(props.platform);
  const [version, setVersion] = useState(() => { const n = e?.versionNumber ?? props.defaultVersion; return n > 0 ? String(n) : ""; });
  const [accountId, setAccountId] = useState(e?.accountId ?? "");
  const [url, setUrl] = useState(e?.url ?? "");
  const [postId, setPostId] = useState(e?.platformPostId ?? "");
  const [title, setTitle] = useState(e?.title ?? props.defaultTitle);
  const [zone, setZone] = useState(e?.timeZone ?? defaultZone(props.platform));
  const [publishedAt, setPublishedAt] = useState(() => localTime(e?.publishedAt ?? now(), e?.timeZone ?? defaultZone(props.platform)));
  const [format, setFormat] = useState<PublicationFormat>(e?.format ?? defaultFormat(props.platform));
  const [distribution, setDistribution] = useState<Distribution>(e?.distribution ?? defaultDistribution(props.platform));
  const [visibility, setVisibility] = useState<Visibility>(e?.visibility ?? "public");
  const accounts = (useMethod("account.list", {}).data?.accounts ?? []).filter((a) => a.platform === platform);

  const choosePlatform = (p: Platform) => {
    setPlatform(p);
    setZone(defaultZone(p));
    setFormat(defaultFormat(p));
    setDistribution(defaultDistribution(p));
    setAccountId("");
  };

  const submit = () => {
    const n = Number(version);
    const details: PublicationDetails = {
      versionNumber: Number.isInteger(n) && n > 0 ? n : undefined,
      accountId: e ? accountId : accountId || undefined,
      url,
      platformPostId: postId,
      title,
      publishedAt,
      timeZone: zone,
      format,
      distribution,
      visibility,
    };
    props.onSubmit(platform, details);
  };

  return (
    <Dialog title={props.title} onClose={props.onCancel} testId={props.testId} wide>
      <form
        className="form perf-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          submit();
        }}
      >
        <div className="perf-grid">
          <label className="field small">
            {t("perf.field.platform")}
            <select data-testid="pub-platform" value={platform} disabled={props.platformFixed} onChange={(ev) => choosePlatform(ev.target.value as Platform)}>
              <PlatformOptions />
            </select>
          </label>
          <label className="field small">
            {t("perf.field.version")}
            <input data-testid="pub-version" inputMode="numeric" value={version} placeholder={t("perf.field.latest")} onChange={(ev) => setVersion(ev.target.value)} />
          </label>
          <label className="field small perf-wide">
            {t("perf.field.url")}
            <input data-testid="pub-url" value={url} placeholder="https://" onChange={(ev) => setUrl(ev.target.value)} />
          </label>
          <label className="field small perf-wide">
            {t("perf.field.title")}
            <input data-testid="pub-title" value={title} onChange={(ev) => setTitle(ev.target.value)} />
          </label>
          <label className="field small">
            {t("perf.field.publishedAt")}
            <input data-testid="pub-time" value={publishedAt} placeholder="2026-03-04 12:30" onChange={(ev) => setPublishedAt(ev.target.value)} />
          </label>
          <label className="field small">
            {t("perf.field.timeZone")}
            <input data-testid="pub-zone" value={zone} onChange={(ev) => setZone(ev.target.value)} />
          </label>
          <label className="field small">
            {t("perf.field.account")}
            <select data-testid="pub-account" value={accountId} onChange={(ev) => setAccountId(ev.target.value)}>
              <option value="">{t("perf.field.noAccount")}</option>
              {accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.handle ? `${a.name} (${a.handle})` : a.name}
                </option>
              ))}
            </select>
          </label>
          <label className="field small">
            {t("perf.field.postId")}
            <input data-testid="pub-post-id" value={postId} onChange={(ev) => setPostId(ev.target.value)} />
          </label>
          <label className="field small">
            {t("perf.field.format")}
            <select data-testid="pub-format" value={format} onChange={(ev) => setFormat(ev.target.value as PublicationFormat)}>
              {FORMATS.map((f) => (
                <option key={f} value={f}>
                  {t(`perf.format.${f}` as MessageId)}
                </option>
              ))}
            </select>
          </label>
          <label className="field small">
            {t("perf.field.distribution")}
            <select data-testid="pub-distribution" value={distribution} onChange={(ev) => setDistribution(ev.target.value as Distribution)}>
              {DISTRIBUTIONS.map((d) => (
                <option key={d} value={d}>
                  {t(`perf.distribution.${d}` as MessageId)}
                </option>
              ))}
            </select>
          </label>
          <label className="field small">
            {t("perf.field.visibility")}
            <select data-testid="pub-visibility" value={visibility} onChange={(ev) => setVisibility(ev.target.value as Visibility)}>
              {VISIBILITIES.map((v) => (
                <option key={v} value={v}>
                  {t(`perf.visibility.${v}` as MessageId)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div className="draft-actions">
          <span className="small muted">{t("perf.form.keys")}</span>
          <span className="spacer" />
          {props.onSkip && (
            <button type="button" data-testid="pub-skip" disabled={props.busy} onClick={props.onSkip}>
              {t("perf.publish.skip")}
            </button>
          )}
          <button type="button" onClick={props.onCancel}>
            {t("perf.cancel")}
          </button>
          <button type="submit" className="primary" data-testid="pub-save" disabled={props.busy}>
            {e ? t("perf.form.saveEdit") : props.onSkip ? t("perf.publish.record") : t("perf.form.add")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Asks for the publication's details when a draft is set to published; `onConfirm`
 * with the details records it in the same write, with `null` sets the status only. */
export function PublishDialog({
  platform,
  defaultVersion,
  defaultTitle,
  busy,
  onConfirm,
  onCancel,
}: {
  platform: Platform;
  defaultVersion: number;
  defaultTitle: string;
  busy: boolean;
  onConfirm: (details: PublicationDetails | null) => void;
  onCancel: () => void;
}) {
  const { t } = useApp();
  return (
    <PublicationForm
      title={t("perf.publish.title", { platform: t(`platform.${platform}` as MessageId) })}
      testId="publish-dialog"
      platform={platform}
      platformFixed
      defaultVersion={defaultVersion}
      defaultTitle={defaultTitle}
      busy={busy}
      onSubmit={(_, details) => onConfirm(details)}
      onSkip={() => onConfirm(null)}
      onCancel={onCancel}
    />
  );
}
