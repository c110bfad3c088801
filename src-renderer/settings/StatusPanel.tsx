/**
 * The one connection status of the settings window. It shows the newest fact there is: the live
 * connection's state, or, right after "Test connection", that test's result (for the values in the
 * form, which may not be saved yet). Never both: a green "Connected" above a red "Could not
 * connect" tells the user nothing. The form drops the test result when it goes stale (a connection
 * field edited, settings saved, the live state changed), and the live state shows again.
 */
import type { StatusView, TestConnectionResult } from '../../src-main/ipc/contract.ts';
import { knownState } from '../../src-shared/ui/connection-state.ts';
import { InertText } from '../shared/InertText.tsx';
import { useT, WithValues } from '../shared/i18n.tsx';

type Tone = 'ok' | 'warn' | 'error';

export function statusTone(status: StatusView): Tone {
  // Connected, but calls from outside may not come in, or a feature is off for lack of scope.
  if (
    status.state === 'connected' &&
    (status.trunkWarning ||
      status.featureProblems?.length ||
      status.desktopProblems?.length ||
      status.callLog?.problem ||
      status.callLog?.paused)
  )
    return 'warn';
  if (status.state === 'connected') return 'ok';
  if (status.state === 'needs-attention') return 'error';
  return 'warn';
}

function LiveStatus({ status }: { status: StatusView }) {
  const t = useT();
  return (
    <>
      <p className="notice__title">
        {status.demo && <span className="badge">{t.t('settings.demo-badge')}</span>}{' '}
        {t.t(`settings.state.${knownState(status.state)}`)}
      </p>
      {status.organisation?.user && (
        <p data-testid="status-signed-in">
          <WithValues
            text={t.t('settings.org.who', { user: WithValues.slot('user') })}
            values={{
              user: <InertText text={status.organisation.user} className="inline-inert" />,
            }}
          />
        </p>
      )}
      {status.reason && <p>{status.reason}</p>}
      {status.remedy && (
        <p>
          <strong>{t.t('settings.what-to-do')}</strong> {status.remedy}
        </p>
      )}
      {(status.paused || status.doNotDisturb) && (
        <p>{status.doNotDisturb ? t.t('settings.dnd-on') : t.t('settings.paused')}</p>
      )}
      {status.trunkWarning && (
        <p data-testid="status-trunk">
          <strong>⚠ </strong>
          <InertText text={status.trunkWarning.message} fit="clamp" className="status-words" />
        </p>
      )}
      {status.presence && (
        <p data-testid="status-presence">
          <WithValues
            text={t.t('settings.presence', { presence: WithValues.slot('presence') })}
            values={{
              presence: <InertText text={status.presence.label} className="inline-inert" />,
            }}
          />
          {status.presence.doNotDisturb && t.t('settings.presence-holds')}
        </p>
      )}
      {status.featureProblems?.map((problem) => (
        <p key={problem.feature} data-testid={`status-feature-${problem.feature}`}>
          {problem.reason} <strong>{t.t('settings.what-to-do')}</strong> {problem.remedy}
        </p>
      ))}
      {status.desktopProblems?.map((problem) => (
        <p key={problem.id} data-testid={`status-desktop-${problem.id}`}>
          {problem.reason} <strong>{t.t('settings.what-to-do')}</strong> {problem.remedy}
        </p>
      ))}
      {status.callLog?.problem && (
        <p data-testid="status-call-log-problem">
          {status.callLog.problem.reason} <strong>{t.t('settings.what-to-do')}</strong>{' '}
          {status.callLog.problem.remedy}
        </p>
      )}
      {status.callLog?.paused && (
        <p data-testid="status-call-log-paused">{status.callLog.paused}</p>
      )}
      {status.callLog?.waiting && (
        <p data-testid="status-call-log-waiting">{status.callLog.waiting}</p>
      )}
    </>
  );
}

function TestResult({
  result,
  extension,
  unsaved,
}: {
  result: TestConnectionResult;
  extension?: string;
  unsaved: boolean;
}) {
  const t = useT();
  const name = WithValues.slot('name');
  return (
    <>
      <p className="notice__title">
        {result.ok ? t.t('settings.test.ok') : t.t('settings.test.failed')}
      </p>
      <p>{result.message}</p>
      {result.extensionName && (
        <p>
          <WithValues
            text={
              extension
                ? t.t('settings.test.extension-of', { extension, name })
                : t.t('settings.test.your-extension-of', { name })
            }
            values={{ name: <InertText text={result.extensionName} className="inline-inert" /> }}
          />
        </p>
      )}
      {result.ok && typeof result.extensionCount === 'number' && (
        <p>{t.t('settings.test.extension-count', { count: result.extensionCount })}</p>
      )}
      {!result.ok && result.remedy && (
        <p>
          <strong>{t.t('settings.what-to-do')}</strong> {result.remedy}
        </p>
      )}
      {result.checks && result.checks.length > 0 && (
        <ul data-testid="test-checks">
          {result.checks.map((check) => (
            <li key={check}>{check}</li>
          ))}
        </ul>
      )}
      {result.ipToAllow && (
        <p>
          <WithValues
            text={t.t(result.ipToAllowMessage ?? 'settings.test.ip', {
              ip: WithValues.slot('ip'),
            })}
            values={{
              ip: (
                <code data-testid="ip-to-allow" dir="ltr">
                  {result.ipToAllow}
                </code>
              ),
            }}
          />
        </p>
      )}
      {!result.ok && typeof result.errcode === 'number' && (
        <p className="notice__detail">
          {t.t('settings.test.errcode', { code: String(result.errcode) })}
        </p>
      )}
      {unsaved && <p className="notice__detail">{t.t('settings.test.unsaved')}</p>}
    </>
  );
}

export interface StatusPanelProps {
  /** The live connection; null where there is none to speak of yet (onboarding). */
  status: StatusView | null;
  test: TestConnectionResult | null;
  /** The test ran with values that differ from the saved ones. */
  testUnsaved: boolean;
  testing: boolean;
  onTest: () => void;
  extension?: string;
}

export function StatusPanel({
  status,
  test,
  testUnsaved,
  testing,
  onTest,
  extension,
}: StatusPanelProps) {
  const t = useT();
  const tone: Tone | null = test ? (test.ok ? 'ok' : 'error') : status ? statusTone(status) : null;
  return (
    <div className={tone ? `status-panel notice notice--${tone}` : 'status-panel'}>
      <div
        className="status-panel__text"
        role="status"
        aria-live="polite"
        data-testid={test ? 'connection-result' : 'status'}
      >
        {test ? (
          <TestResult result={test} unsaved={testUnsaved} {...(extension ? { extension } : {})} />
        ) : (
          status && <LiveStatus status={status} />
        )}
      </div>
      <div className="status-panel__actions">
        <button type="button" className="button" onClick={onTest} disabled={testing}>
          {testing ? t.t('settings.test.testing') : t.t('settings.test.button')}
        </button>
      </div>
    </div>
  );
}
