// @vitest-environment jsdom
/**
 * Subscribe, then get: every window keeps one race rule. A push that arrives before the answer
 * to the first request is newer than that answer, so the answer is dropped.
 */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { HistoryApp } from '../../src-renderer/history/HistoryApp.tsx';
import { fakeApi } from './fake-api.ts';

afterEach(cleanup);

const call = (callId: string, from: string): HistoryEntry => ({
  kind: 'call',
  toDisplay: '101',
  toName: null,
  callerCompany: null,
  numberKind: null,
  callId,
  from,
  fromDisplay: from,
  callerName: null,
  to: '101',
  startedAt: Date.now() - 60_000,
  endedAt: Date.now() - 50_000,
  outcome: 'answered',
  seen: true,
});

describe('subscribe, then get', () => {
  it('history: a push before the first answer wins over that (older) answer, and opening still marks seen', async () => {
    const { api, emit } = fakeApi();
    let answer: (entries: HistoryEntry[]) => void = () => undefined;
    api.listHistory.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    render(<HistoryApp api={api} />);
    act(() => emit('history:changed', [call('newer', '205'), call('older', '206')]));
    await act(async () => answer([call('older', '206')]));
    const rows = screen.getAllByRole('listitem').map((li) => li.getAttribute('data-call-id'));
    expect(rows).toEqual(['newer', 'older']);
    expect(api.markHistorySeen).toHaveBeenCalledTimes(1);
  });

  it('history: a failed first request after a push does not say the history could not load', async () => {
    const { api, emit } = fakeApi();
    let fail: (error: Error) => void = () => undefined;
    api.listHistory.mockImplementation(() => new Promise((_, reject) => (fail = reject)));
    render(<HistoryApp api={api} />);
    act(() => emit('history:changed', [call('pushed', '205')]));
    await act(async () => fail(new Error('gone')));
    expect(screen.getAllByRole('listitem').map((li) => li.getAttribute('data-call-id'))).toEqual([
      'pushed',
    ]);
  });
});
