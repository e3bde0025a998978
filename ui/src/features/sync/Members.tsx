// Settings → Workspace → Members: everyone in the connected team workspace with their
// role and token id. Owners invite (the new token is shown this once, with a copy
// button; Inkstone keeps no copy) and revoke a member's token after a confirmation.
// The server decides who may: a refusal shows as an error with its hint.

import { useCallback, useEffect, useRef, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { MemberRole, SyncInviteResult } from "../../shared/api/generated";
import { queryKey, useMethod, useQueryCache, useWrites } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { useSync } from "./status";

const ROLES: MemberRole[] = ["editor", "viewer", "owner"];

export function WorkspaceMembers() {
  const { t, toast } = useApp();
  // Reading the list may fail (the server away, say): it is read again when sync reaches it.
  const members = useMethod("sync.members", {});
  const refetch = members.refetch;
  const load = useCallback(() => void refetch(), [refetch]);
  const list = members.data ?? null;
  const loadError = members.error ? toClientError(members.error) : null;
  // A failed invite or revoke (a refusal with its hint) goes to the app's one error
  // banner (the data layer's default); the form keeps what was typed.
  const { write, pending: busy } = useWrites();
  const [name, setName] = useState("");
  const [role, setRole] = useState<MemberRole>("editor");
  const [invited, setInvited] = useState<SyncInviteResult | null>(null);
  const [asking, setAsking] = useState<string | null>(null);

  // Each time sync reaches the server again, a list that could not be read is read again.
  const { snap } = useSync();
  const failedLoad = useRef(false);
  useEffect(() => {
    failedLoad.current = loadError !== null;
  }, [loadError]);
  const reachable = snap.status?.connected === true && !snap.status.offline;
  useEffect(() => {
    if (reachable && failedLoad.current) void refetch();
  }, [reachable, snap.epoch, refetch]);

  // An invite makes the list stale (methods.ts): the cache reads it again.
  const invite = async () => {
    const result = await write("sync.invite", { name: name.trim(), role });
    if (!result) return;
    setInvited(result);
    setName("");
  };

  // A revoke answers with the list as it now is.
  const cache = useQueryCache();
  const revoke = async (tokenId: string, who: string) => {
    setAsking(null);
    const now = await write("sync.revokeMember", { tokenId });
    if (!now) return;
    cache.setQueryData(queryKey("sync.members", {}), now);
    toast(t("sync.revokedToast", { name: who }));
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
    </section>
  );
}
