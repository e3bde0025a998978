import type { MessageId } from "../../shared/i18n";
import { useApp } from "../../shared/context";
import { PLATFORMS } from "./format";

/** The five platforms as a select's options, named in the person's language. */
export function PlatformOptions() {
  const { t } = useApp();
  return (
    <>
      {PLATFORMS.map((p) => (
        <option key={p} value={p}>
          {t(`platform.${p}` as MessageId)}
        </option>
      ))}
    </>
  );
}
