// Settings → Workspace → Members: everyone in the connected team workspace with their
// role and token id. Owners invite (the new token is shown this once, with a copy
// button; Inkstone keeps no copy) and revoke a member's token after a confirmation.
// The server decides who may: a refusal shows as an error with its hint.

import { useCallback, useEffect, useRef, useState } from "react";
import { toClientError, type ClientError } from "../../shared/api/client";
import type { MemberRole, SyncInviteResult, SyncMembersResult } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { useSync } from "./status";

const ROLES: MemberRole[] = ["editor", "viewer", "owner"];

export function WorkspaceMembers() {
  const { client, t, toast } = useApp();
  const [list, setList] = useState<SyncMembersResult | null>(null);
  /** Reading the list failed (the server away, say): read again when sync reaches it. */
  const [loadError, setLoadError] = useState<ClientError | null>(null);
  /** An invite or a revoke failed. */
  const [error, setError] = useState<ClientError | null>(null);
  const [name, setName] = useState("");
  const [role, setRole] = useState<MemberRole>("editor");
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<SyncInviteResult | null>(null);
  const [asking, setAsking] = useState<string | null>(null);

  const load = useCallback(() => {
    client.call("sync.members", {}).then(
      (r) => {
        setList(r);
        setLoadError(null);
      },
      (e) => setLoadError(toClientError(e)),
    );
  }, [client]);
  useEffect(load, [load]);
  // Each time sync reaches the server again, a list that could not be read is read again.
  const { snap } = useSync();
  const failedLoad = useRef(false);
  useEffect(() => {
    failedLoad.current = loadError !== null;
  }, [loadError]);
  const reachable = snap.status?.connected === true && !snap.status.offline;
  useEffect(() => {
    if (reachable && failedLoad.current) load();
  }, [reachable, snap.epoch, load]);

  const invite = async () => {
    setBusy(true);
    setError(null);
    try {
      const result = await client.call("sync.invite", { name: name.trim(), role });
      setInvited(result);
      setName("");
      load();
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (tokenId: string, who: string) => {
    setAsking(null);
    setError(null);
    try {
      setList(await client.call("sync.revokeMember", { tokenId }));
      toast(t("sync.revokedToast", { name: who }));
    } catch (e) {
      setError(toClientError(e));
    }
  };

  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      toast(t("sync.copied"));
    } catch {
      toast(t("sync.copyFailed"));
    }
  };

  const roleName = (r: MemberRole) => t(`sync.role.${r}` as MessageId);

  return (
    <section className="field" data-testid="sync-members" aria-label={t("sync.members")}>
      <h3 className="small">{t("sync.members")}</h3>
      {!list && !loadError && <p className="small muted">{t("sync.membersLoading")}</p>}
      {loadError && <ErrorBanner error={loadError} retry={load} />}
      {list && (
        <ul className="plain-list member-list" data-testid="sync-member-list">
          {list.members.map((m) => (
            <li key={m.memberId} className="member-row" data-testid={`sync-member-${m.memberId}`}>
              <span className="member-name">
                {m.name}
                {m.me && <span className="small muted">{t("sync.youSuffix")}</span>}
              </span>
              <span className="small member-role">{roleName(m.role)}</span>
              <code className="small muted member-token">{m.me && m.tokenFingerprint ? `${m.tokenId ?? ""} ${m.tokenFingerprint}` : (m.tokenId ?? "")}</code>
              <span className="small muted member-joined">{m.joinedAt ? t("sync.joined", { date: m.joinedAt.slice(0, 10) }) : ""}</span>
              {/* Every row has every cell, so the columns line up. */}
              <span className="small member-state">{m.revoked && <span className="danger-text">{t("sync.revoked")}</span>}</span>
              <span className="member-actions">
                {list.canManage && !m.me && !m.revoked && m.tokenId && asking !== m.memberId && (
                  <button type="button" className="link" data-testid={`sync-revoke-${m.memberId}`} onClick={() => setAsking(m.memberId)}>
                    {t("sync.revoke")}
                  </button>
                )}
              </span>
              {list.canManage && !m.me && !m.revoked && m.tokenId && asking === m.memberId && (
                <span role="group" className="row member-confirm" aria-label={t("sync.revokeConfirm", { name: m.name })}>
                  <span className="small">{t("sync.revokeConfirm", { name: m.name })}</span>
                  <button type="button" className="danger" data-testid={`sync-revoke-${m.memberId}-confirm`} autoFocus onClick={() => void revoke(m.tokenId ?? "", m.name)}>
                    {t("sync.revoke")}
                  </button>
                  <button type="button" onClick={() => setAsking(null)}>
                    {t("common.cancel")}
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {list && !list.canManage && <p className="small muted">{t("sync.ownersManage")}</p>}
      {invited && (
        <div className="warning" role="status" data-testid="sync-invite-token">
          <p>{t("sync.inviteToken", { name: invited.member.name })}</p>
          <div className="row">
            <code data-testid="sync-invite-token-value">{invited.token}</code>
            <button type="button" data-testid="sync-invite-copy" onClick={() => void copy(invited.token)}>
              {t("sync.copy")}
            </button>
          </div>
          <p className="small">{t("sync.inviteTokenOnce", { role: roleName(invited.member.role) })}</p>
          <button type="button" data-testid="sync-invite-done" onClick={() => setInvited(null)}>
            {t("sync.inviteDone")}
          </button>
        </div>
      )}
      {list?.canManage && (
        <div className="row invite-form" data-testid="sync-invite-form">
          <label className="field">
            <span className="small muted">{t("sync.inviteName")}</span>
            <input data-testid="sync-invite-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </label>
          <label className="field">
            <span className="small muted">{t("sync.inviteRole")}</span>
            <select data-testid="sync-invite-role" value={role} onChange={(e) => setRole(e.target.value as MemberRole)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {roleName(r)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="primary" data-testid="sync-invite" disabled={busy || !name.trim()} onClick={() => void invite()}>
            {t("sync.invite")}
          </button>
        </div>
      )}
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
    </section>
  );
}
