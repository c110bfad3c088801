/**
 * The one connection status of the settings window. It shows the newest fact there is: the live
 * connection's state, or, right after "Test connection", that test's result (for the values in the
 * form, which may not be saved yet). Never both: a green "Connected" above a red "Could not
 * connect" tells the user nothing. The form drops the test result when it goes stale (a connection
 * field edited, settings saved, the live state changed), and the live state shows again.
 */
import type { StatusView, TestConnectionResult } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';

type Tone = 'ok' | 'warn' | 'error';

const STATE_WORDS: Record<StatusView['state'], string> = {
  connected: 'Connected: calls will pop up.',
  connecting: 'Connecting…',
  degraded: 'Connected, but with problems: some calls may not pop up.',
  offline: 'Offline: calls will not pop up until the connection is back.',
  'needs-attention': 'Not connected: this needs your attention.',
};

export function statusTone(status: StatusView): Tone {
  // Connected, but calls from outside may not come in, or a feature is off for lack of scope.
  if (status.state === 'connected' && (status.trunkWarning || status.featureProblems?.length))
    return 'warn';
  if (status.state === 'connected') return 'ok';
  if (status.state === 'needs-attention') return 'error';
  return 'warn';
}

function LiveStatus({ status }: { status: StatusView }) {
  return (
    <>
      <p className="notice__title">
        {status.demo && <span className="badge">Demo</span>}{' '}
        {STATE_WORDS[status.state] ?? status.state}
      </p>
      {status.reason && <p>{status.reason}</p>}
      {status.remedy && (
        <p>
          <strong>What to do:</strong> {status.remedy}
        </p>
      )}
      {(status.paused || status.doNotDisturb) && (
        <p>
          {status.doNotDisturb
            ? 'Do not disturb is on: no popups or sounds.'
            : 'Popups are paused.'}
        </p>
      )}
      {status.trunkWarning && (
        <p data-testid="status-trunk">
          <strong>⚠ </strong>
          <InertText text={status.trunkWarning.message} fit="clamp" className="status-words" />
        </p>
      )}
      {status.presence && (
        <p data-testid="status-presence">
          Your phone presence: <InertText text={status.presence.label} className="inline-inert" />
          {status.presence.doNotDisturb && ' (the phone system holds your calls)'}
        </p>
      )}
      {status.featureProblems?.map((problem) => (
        <p key={problem.feature} data-testid={`status-feature-${problem.feature}`}>
          {problem.reason} <strong>What to do:</strong> {problem.remedy}
        </p>
      ))}
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
  return (
    <>
      <p className="notice__title">
        {result.ok ? 'Connection test: it works.' : 'Connection test: could not connect.'}
      </p>
      <p>{result.message}</p>
      {result.extensionName && (
        <p>
          {extension ? `Extension ${extension} belongs to ` : 'Your extension belongs to '}
          <InertText text={result.extensionName} className="inline-inert" />.
        </p>
      )}
      {result.ok && typeof result.extensionCount === 'number' && (
        <p>
          The service lists {result.extensionCount}{' '}
          {result.extensionCount === 1 ? 'extension' : 'extensions'}.
        </p>
      )}
      {!result.ok && result.remedy && (
        <p>
          <strong>What to do:</strong> {result.remedy}
        </p>
      )}
      {result.ipToAllow && (
        <p>
          This computer&rsquo;s address, as the service sees it, is{' '}
          <code data-testid="ip-to-allow">{result.ipToAllow}</code>. Add it to the API key&rsquo;s
          IP allowlist in the admin console.
        </p>
      )}
      {!result.ok && typeof result.errcode === 'number' && (
        <p className="notice__detail">Error code {result.errcode}</p>
      )}
      {unsaved && (
        <p className="notice__detail">Tested with the values below, which are not saved yet.</p>
      )}
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
          {testing ? 'Testing…' : 'Test connection'}
        </button>
      </div>
    </div>
  );
}
