// The window's language and theme: applied to the page, remembered, and `t` worded in
// the language shown.
import { useCallback, useEffect, useRef, useState } from "react";
import { type Lang, loadMessages, type MessageId, messagesLoaded, translate, useMessagesGeneration } from "../shared/i18n";
import { applyLang, applyTheme, saveLang, saveTheme, type Theme } from "../shared/lib/prefs";

export function useLanguageAndTheme(initialLang: Lang, initialTheme: Theme) {
  const [lang, setLang] = useState<Lang>(initialLang);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  // A catalog's arrival gives `t` a new identity, so everything worded from it (the
  // context's consumers, the editor's placeholder) words itself again.
  const messages = useMessagesGeneration();
  // eslint-disable-next-line react-hooks/exhaustive-deps -- what `translate` returns changes when a catalog arrives
  const t = useCallback((id: MessageId, vars?: Record<string, string | number>) => translate(lang, id, vars), [lang, messages]);

  useEffect(() => {
    applyTheme(theme);
  }, [theme]);
  useEffect(() => {
    applyLang(lang);
  }, [lang]);

  // The other language's catalog loads on the first switch to it; the switch shows once it
  // is in (a catalog that fails to load still switches: ids show, as at start).
  const langWanted = useRef(initialLang);
  const changeLang = useCallback((l: Lang) => {
    langWanted.current = l;
    saveLang(l);
    const apply = () => {
      // Two quick switches: the last one wins, whichever catalog arrives last.
      if (langWanted.current === l) setLang(l);
    };
    if (messagesLoaded(l)) apply();
    else loadMessages(l).then(apply, apply);
  }, []);
  const changeTheme = useCallback((th: Theme) => {
    setTheme(th);
    saveTheme(th);
  }, []);

  return { lang, theme, t, changeLang, changeTheme };
}
