/** Starts one page: finds the API, renders the page's root component, or explains why it cannot. */
import type { ReactNode } from 'react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { getApi } from './api.ts';
import { I18nProvider, translatorFor } from './i18n.tsx';
import { resolveLocale } from '../../src-shared/i18n/locales.ts';

export function mount(render: (api: ScreenpopApi) => ReactNode): void {
  const element = document.getElementById('root');
  if (!element) return;
  const api = getApi();
  createRoot(element).render(
    <StrictMode>
      {api ? (
        <I18nProvider api={api}>{render(api)}</I18nProvider>
      ) : (
        <p className="fatal" role="alert">
          {translatorFor(resolveLocale(navigator.languages)).t('common.app-only')}
        </p>
      )}
    </StrictMode>,
  );
}
