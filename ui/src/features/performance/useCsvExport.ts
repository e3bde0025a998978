// Saving a performance table as a CSV file: the engine writes the CSV (`perf.export`:
// UTF-8 with a BOM, formulas defused, absent values empty), the window only saves it.
import { useState } from "react";
import type { PerfExportParams } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { saveCsv } from "../../shared/lib/files";

export function useCsvExport() {
  const { client, t, toast, showError } = useApp();
  const [exporting, setExporting] = useState(false);
  const exportCsv = async (params: PerfExportParams, name: string) => {
    setExporting(true);
    try {
      const result = await client.call("perf.export", params);
      saveCsv(result.csv, name);
      toast(t("perf.export.done", { n: result.nRows }));
    } catch (e) {
      showError(e, () => void exportCsv(params, name));
    } finally {
      setExporting(false);
    }
  };
  return { exportCsv, exporting };
}
