// Settings → Templates: a title and a Markdown source to start new projects from.

import type { ContentTemplate } from "../../shared/api/generated";
import { useWrites } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { Library } from "./Library";

type TemplateForm = { name: string; titleTemplate: string; sourceTemplate: string };

export function Templates({
  templates,
  onChanged,
  onNew,
}: {
  templates: ContentTemplate[];
  onChanged: () => void;
  onNew: (id: string) => void;
}) {
  const { t } = useApp();
  const { write } = useWrites();
  return (
    <Library<ContentTemplate, TemplateForm>
      kind="template"
      items={templates}
      help={t("template.help")}
      empty={t("template.empty")}
      newLabel={t("template.new")}
      fields={[
        { key: "titleTemplate", label: t("template.titleTemplate"), testId: "template-title" },
        { key: "sourceTemplate", label: t("template.source"), testId: "template-source", rows: 6 },
      ]}
      toForm={(x) => ({ name: x?.name ?? "", titleTemplate: x?.titleTemplate ?? "", sourceTemplate: x?.sourceTemplate ?? "" })}
      subtitle={(x) => x.titleTemplate}
      save={async (form, x) => {
        const template = { name: form.name.trim(), titleTemplate: form.titleTemplate, sourceTemplate: form.sourceTemplate };
        if (!x) return write("template.create", template);
        // Fields this form does not show keep their stored values.
        return write("template.update", {
          id: x.id,
          template: { ...template, defaultPlatforms: x.defaultPlatforms, tags: x.tags },
        });
      }}
      remove={(x) => write("template.delete", { id: x.id })}
      onChanged={onChanged}
      actions={(x) => (
        <button type="button" className="link" onClick={() => onNew(x.id)}>
          {t("template.use")}
        </button>
      )}
    />
  );
}
