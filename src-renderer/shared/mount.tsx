/** Starts one page: finds the API, renders the page's root component, or explains why it cannot. */
import type { ReactNode } from 'react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { ScreenpopApi } from '../../src-main/ipc/contract.ts';
import { getApi } from './api.ts';

export function mount(render: (api: ScreenpopApi) => ReactNode): void {
  const element = document.getElementById('root');
  if (!element) return;
  const api = getApi();
  createRoot(element).render(
    <StrictMode>
      {api ? (
        render(api)
      ) : (
        <p className="fatal" role="alert">
          This page is part of the Screenpop app and cannot run on its own.
        </p>
      )}
    </StrictMode>,
  );
}
