// Settings → Performance: "use performance history in AI context". On, optimize runs
// and drafting sessions may read a short summary of each platform's strongest and
// weakest posts (never raw export rows). A workspace policy that turns it off decides
// instead: the switch is then read-only and says whose policy it is.
import { toClientError } from "../../shared/api/client";
import { useMethod, useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";

export function PerformanceContextSetting() {
  const { t } = useApp();
  const state = useMethod("perf.contextSetting", {});
  // A failed change goes to the app's one error banner (the data layer's default).
  const { write, pending } = useWrites();
  const data = state.data ?? null;
  const byPolicy = data?.decidedByPolicy ?? false;

  const set = async (enabled: boolean) => {
    await write("perf.setContextSetting", { enabled });
  };

  return (
    <div className="form" data-testid="perf-context">
      {state.error && <ErrorBanner error={toClientError(state.error)} retry={() => void state.refetch()} />}
      <label className="row">
        <input
          type="checkbox"
          data-testid="perf-context-toggle"
          checked={data?.enabled ?? false}
          disabled={!data || byPolicy || pending}
          aria-describedby="perf-context-help"
          onChange={(e) => void set(e.target.checked)}
        />
        <span>{t("perf.context.label")}</span>
      </label>
      <p className="small muted" id="perf-context-help">
        {t("perf.context.help")}
      </p>
      {data && byPolicy && (
        <p className="small" data-testid="perf-context-policy">
          {t("perf.context.byPolicy", { workspace: data.policyWorkspace ?? "", owner: data.policySetBy ?? t("perf.context.anOwner") })}
        </p>
      )}
    </div>
  );
}
