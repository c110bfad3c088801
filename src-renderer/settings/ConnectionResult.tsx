/** The outcome of "Test connection" in plain words: what happened, what to do, and the details. */
import type { TestConnectionResult } from '../../src-main/ipc/contract.ts';
import { InertText } from '../shared/InertText.tsx';

export function ConnectionResult({
  result,
  extension,
}: {
  result: TestConnectionResult;
  extension?: string;
}) {
  return (
    <div
      className={result.ok ? 'notice notice--ok' : 'notice notice--error'}
      data-testid="connection-result"
    >
      <p className="notice__title">{result.ok ? 'Connection works.' : 'Could not connect.'}</p>
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
    </div>
  );
}
