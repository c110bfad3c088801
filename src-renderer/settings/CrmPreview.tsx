/**
 * Live preview of the CRM link for a sample call. Main builds it with the same code that opens the
 * real link, so what is shown here is exactly what would open. Stale answers are dropped.
 */
import { useEffect, useRef, useState } from 'react';
import type { CrmPreview as CrmPreviewResult, ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { useT } from '../shared/i18n.tsx';
import { phrase, render } from '../../src-shared/i18n/phrase.ts';

const DEBOUNCE_MS = 200;

export function CrmPreview({
  api,
  template,
  id,
}: {
  api: ScreenpopApi;
  template: string;
  id: string;
}) {
  const [preview, setPreview] = useState<CrmPreviewResult | null>(null);
  const request = useRef(0);
  const t = useT();

  useEffect(() => {
    const mine = ++request.current;
    if (template.trim() === '') {
      setPreview(null);
      return;
    }
    const timer = window.setTimeout(() => {
      api.previewCrm(template.trim()).then(
        (result) => {
          if (request.current === mine) setPreview(result);
        },
        () => {
          if (request.current === mine)
            setPreview({
              ok: false,
              words: [phrase('settings.crm.unavailable')],
              message: 'unavailable',
            });
        },
      );
    }, DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [api, template]);

  return (
    <div className="crm-preview" id={id} aria-live="polite" data-testid="crm-preview">
      {template.trim() === '' ? (
        <p className="field__hint">{t.t('settings.crm.none')}</p>
      ) : preview === null ? (
        <p className="field__hint">{t.t('settings.crm.preparing')}</p>
      ) : preview.ok ? (
        <p>
          <span className="crm-preview__label">{t.t('settings.crm.opens')} </span>
          <bdi dir="ltr" className="crm-preview__url" data-testid="crm-preview-url">
            {preview.url}
          </bdi>
        </p>
      ) : (
        <p className="field__error" data-testid="crm-preview-error">
          {render(preview.words, t)}
        </p>
      )}
    </div>
  );
}
