import { useState } from "react";
import type { BrandProfile, ContentTemplate, Project } from "../shared/api/generated";
import { Dialog } from "../shared/ui/Dialog";
import { useApp } from "../shared/context";
import { useWrite } from "../shared/api/query";

export function NewProjectDialog({
  templates,
  brands,
  initialTemplateId,
  onCreated,
  onClose,
}: {
  templates: ContentTemplate[];
  brands: BrandProfile[];
  initialTemplateId?: string;
  onCreated: (p: Project) => void;
  onClose: () => void;
}) {
  const { t } = useApp();
  const createProject = useWrite("project.create");
  const [title, setTitle] = useState("");
  const [templateId, setTemplateId] = useState(initialTemplateId ?? "");
  const [brandId, setBrandId] = useState("");
  const [busy, setBusy] = useState(false);
  const canCreate = !busy && (title.trim() !== "" || templateId !== "");

  const create = async () => {
    if (!canCreate) return;
    setBusy(true);
    const params: { title?: string; templateId?: string; brandProfileId?: string } = {};
    if (title.trim()) params.title = title.trim();
    if (templateId) params.templateId = templateId;
    if (brandId) params.brandProfileId = brandId;
    // A failure has gone to the app's error banner; the dialog stays open to try again.
    const p = await createProject.run(params);
    if (p) onCreated(p);
    else setBusy(false);
  };

  return (
    <Dialog title={t("new.label")} onClose={onClose} testId="new-project-dialog">
      <label className="field">
        <span className="small muted">{t("new.titleLabel")}</span>
        <input
          data-testid="new-project-title"
          autoComplete="off"
          placeholder={templateId ? t("new.placeholderTemplate") : t("new.placeholder")}
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.nativeEvent.isComposing && e.keyCode !== 229) {
              e.preventDefault();
              void create();
            }
          }}
        />
      </label>
      <label className="field">
        <span className="small muted">{t("new.template")}</span>
        <select data-testid="new-project-template" value={templateId} onChange={(e) => setTemplateId(e.target.value)}>
          <option value="">{t("new.blank")}</option>
          {templates.map((tpl) => (
            <option key={tpl.id} value={tpl.id}>
              {tpl.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="small muted">{t("brand.label")}</span>
        <select data-testid="new-project-brand" value={brandId} onChange={(e) => setBrandId(e.target.value)}>
          <option value="">{t("brand.none")}</option>
          {brands.map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
        </select>
      </label>
      <div className="row end">
        <button type="button" onClick={onClose}>
          {t("common.cancel")}
        </button>
        <button type="button" className="primary" data-testid="create-project" disabled={!canCreate} onClick={() => void create()}>
          {busy ? t("new.creating") : t("new.create")}
        </button>
      </div>
    </Dialog>
  );
}
