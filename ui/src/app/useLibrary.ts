// The brands and templates (the new-project dialog, the palette's "new from template",
// settings), read once the first screen is painted and again when settings change them.
import { useCallback, useState } from "react";
import type { ApiClient } from "../shared/api/client";
import type { BrandProfile, ContentTemplate } from "../shared/api/generated";

export function useLibrary(client: ApiClient, loadProjects: () => Promise<void>, showError: (e: unknown, retry?: () => void) => void) {
  const [brands, setBrands] = useState<BrandProfile[]>([]);
  const [templates, setTemplates] = useState<ContentTemplate[]>([]);
  const loadLibrary = useCallback(
    async function library(): Promise<void> {
      try {
        const [b, tp] = await Promise.all([client.call("brandProfile.list", {}), client.call("template.list", {})]);
        setBrands(b.brandProfiles);
        setTemplates(tp.templates);
      } catch (e) {
        // Retry reads the projects again too: a store held by another process (the CLI)
        // failed both, and this banner is the one left on screen.
        showError(e, () => {
          void loadProjects();
          void library();
        });
      }
    },
    [client, loadProjects, showError],
  );
  return { brands, templates, loadLibrary };
}
