// The dashboard's filters as the person sets them, and as the engine's parameters.
import type { PerfDashboardParams, Platform, PublicationFormat } from "../../shared/api/generated";

export interface DashboardFilters {
  platform: Platform | "";
  accountId: string;
  format: PublicationFormat | "";
  /** `YYYY-MM-DD`, both days included; local days of this computer. */
  from: string;
  to: string;
}

export const NO_FILTERS: DashboardFilters = { platform: "", accountId: "", format: "", from: "", to: "" };

/** The engine's parameters for `filters`: a date is the local midnight it starts, and
 * the range's last day is included (the engine's `to` is exclusive). */
export function toParams(filters: DashboardFilters, sort: string, descending: boolean): PerfDashboardParams {
  const params: PerfDashboardParams = { sort, descending };
  if (filters.platform) params.platform = filters.platform;
  if (filters.accountId) params.accountId = filters.accountId;
  if (filters.format) params.format = filters.format;
  if (filters.from) params.from = new Date(`${filters.from}T00:00:00`).toISOString();
  if (filters.to) {
    const end = new Date(`${filters.to}T00:00:00`);
    end.setDate(end.getDate() + 1);
    params.to = end.toISOString();
  }
  return params;
}
