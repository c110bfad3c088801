/**
 * A render error in a page shows a friendly line in the window's language (and a Close button)
 * instead of a blank window, and goes to main's log through the ErrorReporter.
 */
import { Component, type ErrorInfo, type ReactNode } from 'react';
import { useT } from './i18n.tsx';
import { errorReport, type ErrorReporter } from './error-reporting.ts';

interface Props {
  reporter: ErrorReporter;
  /** What the Close button does (the window's close through the API). */
  onClose: () => void;
  children: ReactNode;
}

export class ErrorBoundary extends Component<Props, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    this.props.reporter.report(errorReport('render', error, info.componentStack ?? undefined));
  }

  override render(): ReactNode {
    return this.state.failed ? <WindowError onClose={this.props.onClose} /> : this.props.children;
  }
}

function WindowError({ onClose }: { onClose: () => void }) {
  const t = useT();
  return (
    <div className="fatal" role="alert">
      <p>{t.t('common.window-error')}</p>
      <button type="button" onClick={onClose}>
        {t.t('common.window-error.close')}
      </button>
    </div>
  );
}
