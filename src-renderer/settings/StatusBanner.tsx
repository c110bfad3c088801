/** The connection's state in plain words, with the reason and what to do when something is wrong. */
import type { StatusView } from '../../src-main/ipc/contract.ts';

const STATE_WORDS: Record<StatusView['state'], string> = {
  connected: 'Connected: calls will pop up.',
  connecting: 'Connecting…',
  degraded: 'Connected, but with problems: some calls may not pop up.',
  offline: 'Offline: calls will not pop up until the connection is back.',
  'needs-attention': 'Not connected: this needs your attention.',
};

export function statusTone(status: StatusView): 'ok' | 'warn' | 'error' {
  if (status.state === 'connected') return 'ok';
  if (status.state === 'needs-attention') return 'error';
  return 'warn';
}

export function StatusBanner({ status }: { status: StatusView }) {
  return (
    <div className={`notice notice--${statusTone(status)}`} role="status" data-testid="status">
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
    </div>
  );
}
