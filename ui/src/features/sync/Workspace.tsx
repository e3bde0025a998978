// Settings → Workspace: connect to the team's workspace server with its URL and an
// invite token (kept in the OS keychain; only its fingerprint is shown), pause and
// resume sync, the members (owners manage them: ./Members.tsx) and disconnecting (the
// token leaves the keychain; unsynced versions stay, paused). A plain http:// URL to
// another machine needs an explicit confirmation.

import { useState } from "react";
import { useMethod } from "../../shared/api/query";
import type { MemberRole } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { useSyncActions } from "./actions";
import { syncLabel, syncProblem } from "./status";
import { keyTravelsInClear } from "../settings";
import { WorkspaceMembers } from "./Members";
import { WorkspacePolicy } from "./Policy";
import { AiActivity } from "../activity";

const ROLES: readonly string[] = ["owner", "editor", "viewer"] satisfies MemberRole[];

export function WorkspaceSync() {
  const { t, lang, toast } = useApp();
  // The same state and actions as the sidebar's: one store for the window.
  // The connect form keeps its error beside the address and token on purpose: the error
  // is about what was typed and goes when either changes.
  const { act: run, busy, error, clear, togglePause: toggle, snap, store } = useSyncActions<"act">();
  const status = snap.status;
  const [typedUrl, setTypedUrl] = useState<string | null>(null);
  const [token, setToken] = useState("");
  const [allowPlain, setAllowPlain] = useState(false);
  const [askingDisconnect, setAskingDisconnect] = useState(false);
  // Connecting asks who the person is to colleagues, and whether the projects made
  // before go too (they stay local-only otherwise).
  const [typedName, setName] = useState<string | null>(null);
  const [uploadExisting, setUploadExisting] = useState(false);
  // The workspace's display name until the person types another.
  const workspace = useMethod("workspace.get", {}).data;
  const name = typedName ?? workspace?.displayName ?? "";
  const localOnly = status?.localOnlyVersions ?? 0;
  // The connection's URL until the person types another.
  const url = typedUrl ?? status?.serverUrl ?? "";
  const plain = keyTravelsInClear(url.trim());
  const problem = syncProblem(lang, status);
  const owed = (status?.pending ?? 0) + (status?.failed ?? 0);
  const roleName = (r: string | undefined) => (r && ROLES.includes(r) ? t(`sync.role.${r}` as MessageId) : (r ?? ""));

  const act = (action: () => Promise<void>) => run("act", action);
  const connect = () =>
    act(async () => {
      await store.connect({
        serverUrl: url.trim(),
        token: token.trim(),
        ...(plain && allowPlain ? { allowPlainHttp: true } : {}),
        ...(name.trim() ? { displayName: name.trim() } : {}),
        ...(uploadExisting && localOnly > 0 ? { uploadExisting: true } : {}),
      });
      setUploadExisting(false);
      setToken("");
      setTypedUrl(null);
      toast(t("sync.connected"));
    });
  const togglePause = () => toggle("act");
  const disconnect = () =>
    act(async () => {
      setAskingDisconnect(false);
      const kept = await store.disconnect();
      toast(kept === 0 ? t("sync.disconnected") : t("sync.disconnectedKept", { n: kept }));
    });
  return (
    <div className="form" data-testid="settings-workspace-body">
      {status?.connected && (
        <div className="field" data-testid="sync-connection" data-state={status.state}>
          <span>
            {status.workspaceName} · {t("sync.memberRole", { name: status.memberName ?? "", role: roleName(status.role) })} · <span data-testid="sync-connection-state">{syncLabel(t, status)}</span>
          </span>
          {problem && (
            <span className="small warning" data-testid="settings-sync-problem" data-code={problem.code}>
              {problem.title}
              {problem.detail && <span className="muted sync-problem-detail">{problem.detail}</span>}
            </span>
          )}
          <span className="small muted">{t("sync.tokenStored", { fp: status.tokenFingerprint ?? "" })}</span>
          <div className="row">
            <button type="button" data-testid="settings-sync-pause" disabled={busy !== null} onClick={() => void togglePause()}>
              {status.paused ? t("sync.resume") : t("sync.pause")}
            </button>
            {askingDisconnect ? (
              <span role="group" className="row" aria-label={t("sync.disconnectConfirm", { name: status.workspaceName ?? "" })}>
                <span className="small">{t("sync.disconnectConfirm", { name: status.workspaceName ?? "" })}</span>
                <button type="button" className="danger" data-testid="settings-sync-disconnect-confirm" autoFocus disabled={busy !== null} onClick={() => void disconnect()}>
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
      {status && !status.connected && owed > 0 && (
        <p className="small warning" data-testid="sync-kept-jobs">
          {t("sync.keptJobs", { n: owed })}
        </p>
      )}
      {status?.connected && localOnly > 0 && (
        <p className="small muted" data-testid="sync-local-only">
          {t("sync.localOnly", { n: localOnly, projects: status.localOnlyProjects })}
        </p>
      )}
      {status?.connected && <WorkspaceMembers key={status.tokenFingerprint} />}
      {status?.connected && <WorkspacePolicy key={`policy-${status.tokenFingerprint}`} />}
      {status?.connected && (status.role === "owner" || status.role === "editor") && (
        <section className="field" data-testid="workspace-ai-activity" aria-label={t("aiActivity.workspace.title")} key={`activity-${status.tokenFingerprint}`}>
          <h3 className="small">{t("aiActivity.workspace.title")}</h3>
          <p className="small muted">{t(status.role === "owner" ? "aiActivity.workspace.owner" : "aiActivity.workspace.editor")}</p>
          <AiActivity scope="workspace" />
        </section>
      )}
      {status?.connected && status.role === "viewer" && (
        <section className="field" data-testid="workspace-ai-activity-viewer" aria-label={t("aiActivity.workspace.title")}>
          <h3 className="small">{t("aiActivity.workspace.title")}</h3>
          <p className="small muted">{t("aiActivity.workspace.viewer")}</p>
        </section>
      )}
      <label className="field">
        <span className="small muted">{t("sync.serverUrl")}</span>
        <input
          data-testid="sync-url"
          value={url}
          placeholder="https://team.example:8787"
          onChange={(e) => {
            setTypedUrl(e.target.value);
            // An error about the old address or token says nothing about the new one.
            clear();
          }}
        />
      </label>
      <label className="field">
        <span className="small muted">{t("sync.token")}</span>
        <input
          data-testid="sync-token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => {
            setToken(e.target.value);
            clear();
          }}
        />
        <span className="small muted">{t("sync.tokenHelp")}</span>
      </label>
      {!status?.connected && (
        <label className="field">
          <span className="small muted">{t("sync.yourName")}</span>
          <input data-testid="sync-display-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          <span className="small muted">{t("sync.yourNameHelp")}</span>
        </label>
      )}
      {!status?.connected && localOnly > 0 && (
        <label className="check" data-testid="sync-upload-existing-row">
          <input type="checkbox" data-testid="sync-upload-existing" checked={uploadExisting} onChange={(e) => setUploadExisting(e.target.checked)} />
          {t("sync.uploadExisting", { n: localOnly, projects: status?.localOnlyProjects ?? 0 })}
          <span className="small muted">{t("sync.uploadExistingHelp")}</span>
        </label>
      )}
      {plain && (
        <div className="warning plain-http" role="alert" data-testid="sync-plain-http">
          <p>{t("hint.plain_http")}</p>
          <label className="check">
            <input type="checkbox" data-testid="sync-allow-plain" checked={allowPlain} onChange={(e) => setAllowPlain(e.target.checked)} />
            {t("sync.allowPlainHttp")}
          </label>
        </div>
      )}
      {error && <ErrorBanner error={error} onDismiss={clear} />}
      <div className="row">
        <button type="button" className="primary" data-testid="sync-connect" disabled={busy !== null || !url.trim() || !token.trim() || (plain && !allowPlain)} onClick={() => void connect()}>
          {status?.connected ? t("sync.reconnect") : t("sync.connect")}
        </button>
      </div>
    </div>
  );
}
