/** Reads a Blob as standard base64 (without the data: prefix). */
export function blobToBase64(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onerror = () => reject(r.error ?? new Error("read failed"));
    r.onload = () => {
      const s = String(r.result ?? "");
      const comma = s.indexOf(",");
      resolve(comma >= 0 ? s.slice(comma + 1) : s);
    };
    r.readAsDataURL(blob);
  });
}

/** `![alt](media/<fileName>)`, with brackets in the alt text escaped. */
export function imageMarkdown(alt: string, fileName: string): string {
  const cleanAlt = alt.replace(/[[\]\\]/g, "\\$&");
  return `![${cleanAlt}](media/${fileName})`;
}

export function altFromName(name: string): string {
  return name.replace(/\.[^.]+$/, "").replace(/[_-]+/g, " ").trim() || "image";
}

/** Saves CSV text the engine wrote as `<name>-<today>.csv` through the browser's download. */
export function saveCsv(csv: string, name: string): void {
  const blob = new Blob([csv], { type: "text/csv;charset=utf-8" });
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = `${name}-${new Date().toISOString().slice(0, 10)}.csv`;
  link.click();
  URL.revokeObjectURL(url);
}
