/**
 * Starts one page: finds the API, renders the page's root component (inside the error boundary),
 * or explains why it cannot.
 */
import type { ReactNode } from 'react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { getApi } from './api.ts';
import { ErrorBoundary } from './ErrorBoundary.tsx';
import { ErrorReporter } from './error-reporting.ts';
import { I18nProvider, translatorFor } from './i18n.tsx';
import { resolveLocale } from '../../src-shared/i18n/locales.ts';

export function mount(render: (api: ScreenpopApi) => ReactNode): void {
  const element = document.getElementById('root');
  if (!element) return;
  const api = getApi();
  // Errors of this window go to main's log: uncaught ones from here, render errors through the
  // boundary (which shows a friendly line in the window's language, never a blank window).
  const reporter = api ? new ErrorReporter(api) : null;
  reporter?.listen(window);
  createRoot(element).render(
    <StrictMode>
      {api && reporter ? (
        <I18nProvider api={api}>
          <ErrorBoundary reporter={reporter} onClose={() => void api.closeWindow().catch(() => {})}>
            {render(api)}
          </ErrorBoundary>
        </I18nProvider>
      ) : (
        <p className="fatal" role="alert">
          {translatorFor(resolveLocale(navigator.languages)).t('common.app-only')}
        </p>
      )}
    </StrictMode>,
  );
}
