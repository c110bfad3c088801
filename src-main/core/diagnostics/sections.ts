/**
 * The sections both the tray app and the headless runner put in a diagnostics archive. Each is a
 * plain function of what its owner holds; redaction happens once, in Diagnostics.
 */
import { arch, release, type as osType } from 'node:os';
import type { Policy } from '../settings/policy.ts';
import type { Settings } from '../settings/types.ts';
import type { StatusChange, StatusTimeline } from './bounded-log.ts';
import type { DiagnosticsSection } from './diagnostics.ts';

export function aboutSection(info: {
  app: string;
  version: string;
  now: () => number;
  extra?: Record<string, unknown>;
}): DiagnosticsSection {
  return {
    name: 'about',
    collect: () => ({
      app: info.app,
      version: info.version,
      writtenAt: new Date(info.now()).toISOString(),
      platform: process.platform,
      arch: arch(),
      os: `${osType()} ${release()}`,
      node: process.versions.node,
      ...(process.versions.electron ? { electron: process.versions.electron } : {}),
      ...info.extra,
    }),
  };
}

export function settingsSection(
  settings: () => Settings,
  extra: () => Record<string, unknown> = () => ({}),
): DiagnosticsSection {
  return { name: 'settings', collect: () => ({ ...extra(), settings: settings() }) };
}

/** Whether the keychain holds the secret, in words (a field named like a secret is removed). */
export function keychainState(stored: boolean): Record<string, unknown> {
  return { keychain: stored ? 'holds the API secret for this key' : 'no API secret stored' };
}

export function policySection(policy: Policy): DiagnosticsSection {
  return {
    name: 'policy',
    collect: () =>
      policy.source === null
        ? { policy: 'none' }
        : {
            source: policy.source,
            managedBy: policy.managedBy,
            presets: policy.settings,
            locked: policy.locked,
            onRing: policy.onRing,
          },
  };
}

export function connectionSection(
  current: () => unknown,
  timeline: StatusTimeline,
): DiagnosticsSection {
  return {
    name: 'connection',
    collect: () => {
      const { items, dropped } = timeline.snapshot();
      return {
        now: current(),
        timeline: items.map((c: StatusChange) => ({ ...c, time: new Date(c.at).toISOString() })),
        ...(dropped ? { olderChangesDropped: dropped } : {}),
      };
    },
  };
}

export function connectionTestSection(
  last: () => { at: number; result: unknown } | null,
): DiagnosticsSection {
  return {
    name: 'connection-test',
    collect: () => {
      const test = last();
      return test
        ? { time: new Date(test.at).toISOString(), result: test.result }
        : { result: 'no connection test since the app started' };
    },
  };
}
