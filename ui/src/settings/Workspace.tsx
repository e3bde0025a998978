// Settings → Workspace: connect to the team's workspace server with its URL and an
// invite token (kept in the OS keychain; only its fingerprint is shown), pause and
// resume sync, the members (owners manage them: ./Members.tsx) and disconnecting (the
// token leaves the keychain; unsynced versions stay, paused). A plain http:// URL to
// another machine needs an explicit confirmation.

import { useEffect, useState } from "react";
import { toClientError, type ClientError } from "../api/client";
import type { SyncStatus } from "../api/generated";
import { ErrorBanner } from "../components/ErrorBanner";
import { useApp } from "../context";
import type { MessageId } from "../i18n";
import { keyTravelsInClear } from "./llm";
import { WorkspaceMembers } from "./Members";

export function WorkspaceSync() {
  const { client, t, toast } = useApp();
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const [allowPlain, setAllowPlain] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  const [askingDisconnect, setAskingDisconnect] = useState(false);
  useEffect(() => {
    client.call("sync.status", {}).then(
      (s) => {
        setStatus(s);
        if (s.serverUrl) setUrl((u) => u || s.serverUrl || "");
      },
      (e) => setError(toClientError(e)),
    );
  }, [client]);
  const plain = keyTravelsInClear(url.trim());
  const connect = async () => {
    setBusy(true);
    setError(null);
    try {
      setStatus(await client.call("sync.connect", { serverUrl: url.trim(), token: token.trim(), ...(plain && allowPlain ? { allowPlainHttp: true } : {}) }));
      setToken("");
      toast(t("sync.connected"));
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };
  const disconnect = async () => {
    setAskingDisconnect(false);
    setError(null);
    try {
      const done = await client.call("sync.disconnect", {});
      setStatus(done.status);
      toast(done.keptJobs > 0 ? t("sync.disconnectedKept", { n: done.keptJobs }) : t("sync.disconnected"));
    } catch (e) {
      setError(toClientError(e));
    }
  };
  return (
    <div className="form" data-testid="settings-workspace-body">
      {status?.connected && (
        <div className="field" data-testid="sync-connection">
          <span>
            {status.workspaceName} · {status.memberName} ({status.role}) · {t(`sync.state.${status.state}` as MessageId, { n: status.pending })}
          </span>
          <span className="small muted">{t("sync.tokenStored", { fp: status.tokenFingerprint ?? "" })}</span>
          <div className="row">
            <button type="button" data-testid="settings-sync-pause" onClick={async () => setStatus(await client.call(status.paused ? "sync.resume" : "sync.pause", {}))}>
              {status.paused ? t("sync.resume") : t("sync.pause")}
            </button>
            {askingDisconnect ? (
              <span role="group" aria-label={t("sync.disconnectConfirm", { name: status.workspaceName ?? "" })}>
                <span className="small">{t("sync.disconnectConfirm", { name: status.workspaceName ?? "" })}</span>
                <button type="button" className="danger" data-testid="settings-sync-disconnect-confirm" autoFocus onClick={() => void disconnect()}>
                  {t("sync.disconnect")}
                </button>
                <button type="button" onClick={() => setAskingDisconnect(false)}>
                  {t("common.cancel")}
                </button>
              </span>
            ) : (
              <button type="button" data-testid="settings-sync-disconnect" onClick={() => setAskingDisconnect(true)}>
                {t("sync.disconnect")}
              </button>
            )}
          </div>
        </div>
      )}
      {status?.connected && <WorkspaceMembers key={status.tokenFingerprint} />}
      <label className="field">
        <span className="small muted">{t("sync.serverUrl")}</span>
        <input data-testid="sync-url" value={url} placeholder="https://team.example:8787" onChange={(e) => setUrl(e.target.value)} />
      </label>
      <label className="field">
        <span className="small muted">{t("sync.token")}</span>
        <input data-testid="sync-token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
        <span className="small muted">{t("sync.tokenHelp")}</span>
      </label>
      {plain && (
        <div className="warning plain-http" role="alert" data-testid="sync-plain-http">
          <p>{t("hint.plain_http")}</p>
          <label className="check">
            <input type="checkbox" data-testid="sync-allow-plain" checked={allowPlain} onChange={(e) => setAllowPlain(e.target.checked)} />
            {t("sync.allowPlainHttp")}
          </label>
        </div>
      )}
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <div className="row">
        <button type="button" className="primary" data-testid="sync-connect" disabled={busy || !url.trim() || !token.trim() || (plain && !allowPlain)} onClick={() => void connect()}>
          {status?.connected ? t("sync.reconnect") : t("sync.connect")}
        </button>
      </div>
    </div>
  );
}
