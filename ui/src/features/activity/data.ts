// The activity log's calls that are not cached reads. An export is a one-off: the engine
// builds the CSV at the moment the person asks (caching it would hand out an old table).
import type { ApiClient, ParamsOf, ResultOf } from "../../shared/api/client";

export function exportActivity(client: ApiClient, params: ParamsOf<"aiActivity.export">): Promise<ResultOf<"aiActivity.export">> {
  return client.call("aiActivity.export", params);
}
