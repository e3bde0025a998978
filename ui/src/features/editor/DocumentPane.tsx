// The project's text where the person writes: the title, the Markdown editor and, when
// on, the preview beside it (its renderer loaded on first use, keeping startup small).
import { lazy, type Ref, Suspense } from "react";
import type { Project } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { type AnchorMark, type EditorHandle, MarkdownEditor } from "./MarkdownEditor";
import type { ProjectSession, ProjectSnapshot } from "./session";
import { TitleField } from "./TitleField";

const Preview = lazy(() => import("../../shared/ui/Preview").then((m) => ({ default: m.Preview })));

export interface DocumentPaneProps {
  projectId: string;
  project: Project;
  s: ProjectSnapshot;
  session: ProjectSession;
  preview: boolean;
  editorRef: Ref<EditorHandle>;
  anchors: AnchorMark[];
  onEditorChange: () => void;
  onImages: (files: File[], pos: number) => void;
  onSelectionText: (text: string) => void;
  focusWhenReady: () => boolean;
  focusEditor: () => void;
  missingImage: (alt: string) => string;
}

export function DocumentPane({ projectId, project, s, session, preview, editorRef, anchors, onEditorChange, onImages, onSelectionText, focusWhenReady, focusEditor, missingImage }: DocumentPaneProps) {
  const { client, t } = useApp();
  return (
    <div className={`doc ${preview ? "with-preview" : ""}`}>
      <div className="doc-source">
        <TitleField
          value={s.title}
          label={t("title.label")}
          placeholder={t("title.placeholder")}
          onChange={(v) => session.setTitle(v)}
          onEnter={focusEditor}
          onBlur={() => session.titleBlurred()}
        />
        <MarkdownEditor
          ref={editorRef}
          docKey={projectId}
          initialText={s.startText ?? project.source}
          ariaLabel={t("editor.label")}
          placeholder={t("editor.placeholder")}
          anchors={anchors}
          onChange={onEditorChange}
          onImageFiles={onImages}
          onSelectionText={onSelectionText}
          focusWhenReady={focusWhenReady}
        />
      </div>
      {preview && (
        <Suspense fallback={<p className="preview muted">{t("preview.loading")}</p>}>
          <Preview client={client} projectId={projectId} source={s.previewSource} label={t("preview.label")} missingImage={missingImage} />
        </Suspense>
      )}
    </div>
  );
}
