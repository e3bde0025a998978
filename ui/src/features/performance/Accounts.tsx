// The workspace's publishing accounts (platform, name, handle): a small list that
// publications name. An account a publication names cannot be deleted (the engine says
// which to reassign first). An account with imported days (公众号 用户分析) shows its
// latest follower count.
import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { Platform } from "../../shared/api/generated";
import { useMethod, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { PlatformOptions } from "./PlatformOptions";

/** The latest imported day of an account's followers, when it has one. */
function Followers({ accountId }: { accountId: string }) {
  const { t, lang } = useApp();
  const days = useMethod("perf.accountDays", { accountId }).data?.days ?? [];
  const latest = [...days].reverse().find((d) => d.metrics.followers_total);
  if (!latest) return null;
  const total = new Intl.NumberFormat(lang).format(latest.metrics.followers_total.value);
  return (
    <span className="small muted" data-testid="account-followers">
      {" · "}
      {t("perf.accounts.followers", { total, date: latest.date, n: days.length })}
    </span>
  );
}

export function Accounts() {
  const { t } = useApp();
  const list = useMethod("account.list", {});
  // A failed add or delete (an account a publication names, say) goes to the app's one
  // error banner (the data layer's default), with the engine's hint.
  const { write, pending } = useWrites();
  const [platform, setPlatform] = useState<Platform>("wechat");
  const [name, setName] = useState("");
  const [handle, setHandle] = useState("");
  const accounts = list.data?.accounts ?? [];
  const loadError = list.error ? toClientError(list.error) : null;

  const add = async () => {
    const r = await write("account.create", { platform, name, ...(handle.trim() ? { handle } : {}) });
    if (r) {
      setName("");
      setHandle("");
    }
  };

  return (
    <div className="form" data-testid="accounts">
      <p className="small muted">{t("perf.accounts.help")}</p>
      {loadError && <ErrorBanner error={loadError} retry={() => void list.refetch()} />}
      {list.data && accounts.length === 0 && (
        <p className="muted small" data-testid="accounts-empty">
          {t("perf.accounts.empty")}
        </p>
      )}
      {accounts.length > 0 && (
        <ul className="perf-list">
          {accounts.map((a) => (
            <li key={a.id} className="row between" data-testid="account-item">
              <span>
                {a.name}
                {a.handle && <span className="muted"> {a.handle}</span>}
                <span className="small muted"> · {t(`platform.${a.platform}` as MessageId)}</span>
                <Followers accountId={a.id} />
              </span>
              <button type="button" className="link danger-link" data-testid="account-delete" disabled={pending} onClick={() => void write("account.delete", { accountId: a.id })}>
                {t("perf.accounts.delete")}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <label className="field small">
          {t("perf.field.platform")}
          <select data-testid="account-platform" value={platform} onChange={(e) => setPlatform(e.target.value as Platform)}>
            <PlatformOptions />
          </select>
        </label>
        <label className="field small">
          {t("perf.accounts.name")}
          <input data-testid="account-name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field small">
          {t("perf.accounts.handle")}
          <input data-testid="account-handle" value={handle} onChange={(e) => setHandle(e.target.value)} />
        </label>
        <button type="submit" className="primary" data-testid="account-add" disabled={pending || name.trim() === ""}>
          {t("perf.accounts.add")}
        </button>
      </form>
    </div>
  );
}
