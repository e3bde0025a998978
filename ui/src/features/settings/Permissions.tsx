// Settings → Permissions: every "always allow" rule the person made, with its scope,
// pattern, when it was made, how often it allowed a call and when it last did. A rule
// can be narrowed to a smaller scope or removed (its tool asks again).
import type { AllowRuleView, AllowScope } from "../../shared/api/generated";
import { useMethod, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { formatFullTime } from "../../shared/i18n";
import { ALLOW_SCOPES, patternLabel, scopeLabel } from "../drafting";

export function Permissions() {
  const { t, lang, toast } = useApp();
  const list = useMethod("allowRule.list", {}, { report: true }).data ?? null;
  const { write } = useWrites();
  if (!list) return <p className="small muted">{t("ai.loading")}</p>;
  const where = (rule: AllowRuleView) =>
    rule.scope === "workspace" ? scopeLabel(t, rule.scope) : `${scopeLabel(t, rule.scope)} · ${t("settings.permissions.inProject", { project: rule.projectTitle ?? rule.projectId })}`;
  const narrow = async (rule: AllowRuleView, scope: AllowScope) => {
    if ((await write("allowRule.narrow", { ruleId: rule.id, scope })) !== undefined) toast(t("settings.permissions.narrowed"));
  };
  const remove = async (rule: AllowRuleView) => {
    if ((await write("allowRule.remove", { ruleId: rule.id })) !== undefined) toast(t("settings.permissions.removed"));
  };
  return (
    <div className="form" data-testid="permissions">
      <p className="small muted">{t("settings.permissions.intro")}</p>
      {list.rules.length === 0 ? (
        <p className="small muted" data-testid="permissions-none">
          {t("settings.permissions.none")}
        </p>
      ) : (
        <table className="usage-table permissions-table" data-testid="permissions-rules">
          <thead>
            <tr>
              <th scope="col">{t("settings.permissions.tool")}</th>
              <th scope="col">{t("settings.permissions.scope")}</th>
              <th scope="col">{t("settings.permissions.pattern")}</th>
              <th scope="col">{t("settings.permissions.made")}</th>
              <th scope="col">{t("settings.permissions.used")}</th>
              <th scope="col">
                <span className="sr-only">{t("settings.permissions.remove")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.rules.map((rule) => {
              const narrower = ALLOW_SCOPES.filter((s) => ALLOW_SCOPES.indexOf(s) < ALLOW_SCOPES.indexOf(rule.scope));
              return (
                <tr key={rule.id} data-testid="permission-rule" data-rule={rule.id} data-scope={rule.scope}>
                  <td>
                    <code>{rule.tool}</code>
                  </td>
                  <td>{where(rule)}</td>
                  <td>{patternLabel(t, rule.pattern)}</td>
                  <td>{formatFullTime(lang, rule.createdAt)}</td>
                  <td data-testid="permission-used" data-count={rule.allowedCount}>
                    {t("settings.permissions.usedCount", { n: rule.allowedCount, last: rule.lastAllowedAt ? formatFullTime(lang, rule.lastAllowedAt) : "" })}
                  </td>
                  <td>
                    <div className="row">
                      {narrower.length > 0 && (
                        <select
                          aria-label={t("settings.permissions.narrow")}
                          data-testid="permission-narrow"
                          value=""
                          onChange={(e) => {
                            if (e.target.value) void narrow(rule, e.target.value as AllowScope);
                          }}
                        >
                          <option value="">{t("settings.permissions.narrow")}…</option>
                          {narrower.map((s) => (
                            <option key={s} value={s}>
                              {scopeLabel(t, s)}
                            </option>
                          ))}
                        </select>
                      )}
                      <button type="button" data-testid="permission-remove" onClick={() => void remove(rule)}>
                        {t("settings.permissions.remove")}
                      </button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
