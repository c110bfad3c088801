// @vitest-environment jsdom
/** The history window: newest first, outcomes in words, missed calls marked, seen on open. */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { HistoryApp } from '../../src-renderer/history/HistoryApp.tsx';
import { fakeApi } from './fake-api.ts';

afterEach(cleanup);

const now = Date.now();
const entries: HistoryEntry[] = [
  {
    kind: 'call',
    toDisplay: '101',
    toName: null,
    callId: 'old',
    from: '205',
    fromDisplay: '205',
    callerName: 'Grace Hopper',
    to: '101',
    startedAt: now - 3_600_000,
    endedAt: now - 3_000_000,
    outcome: 'answered',
    seen: true,
  },
  {
    kind: 'call',
    toDisplay: '101',
    toName: null,
    callId: 'missed',
    from: '+442079460958',
    fromDisplay: '+44 20 7946 0958',
    callerName: null,
    to: '101',
    startedAt: now - 60_000,
    endedAt: now - 40_000,
    outcome: 'missed',
    seen: false,
  },
  {
    kind: 'call',
    toDisplay: '101',
    toName: null,
    callId: 'live',
    from: '<script>x</script>',
    fromDisplay: '<script>x</script>',
    callerName: null,
    to: '101',
    startedAt: now - 5_000,
    endedAt: null,
    outcome: 'ringing',
    seen: true,
  },
];

describe('history', () => {
  it('lists calls newest first with what ended them, highlights missed ones and marks them seen on open', async () => {
    const { api, emit } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    const { container } = render(<HistoryApp api={api} />);
    const list = await screen.findByRole('list', { name: 'Calls, newest first' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.getAttribute('data-call-id'))).toEqual(['live', 'missed', 'old']);
    expect(items[0]?.textContent).toContain('Still ringing');
    expect(items[1]?.textContent).toContain('Missed');
    expect(items[1]?.textContent).toContain('New');
    expect(items[1]?.className).toContain('entry--missed');
    expect(items[2]?.textContent).toContain('Answered');
    expect(items[2]?.textContent).toContain('Grace Hopper');
    expect(items[2]?.textContent).not.toContain('New');
    expect(screen.getByText('3 calls, 1 missed')).toBeTruthy();
    expect(within(items[0] as HTMLElement).getByTestId('history-caller').textContent).toBe(
      '<script>x</script>',
    );
    expect(container.querySelector('script')).toBeNull();
    await waitFor(() => expect(api.markHistorySeen).toHaveBeenCalledTimes(1));

    // main answers with the entries now seen: the "New" mark stays for this visit.
    act(() =>
      emit(
        'history:changed',
        entries.map((e) => ({ ...e, seen: true })),
      ),
    );
    expect(screen.getAllByRole('listitem')[1]?.textContent).toContain('New');
  });

  it('marks a call missed while the window is open as new, and counts returning to the window as seeing it', async () => {
    const { api, emit } = fakeApi();
    api.listHistory.mockResolvedValue([]);
    render(<HistoryApp api={api} />);
    await screen.findByText(/No calls yet/);
    await waitFor(() => expect(api.markHistorySeen).toHaveBeenCalledTimes(1));
    act(() => emit('history:changed', [{ ...entries[1]!, callId: 'later' }]));
    const item = screen.getByRole('listitem');
    expect(item.textContent).toContain('Missed');
    expect(item.textContent).toContain('New');
    const before = api.markHistorySeen.mock.calls.length;
    act(() => void window.dispatchEvent(new Event('focus')));
    expect(api.markHistorySeen.mock.calls.length).toBe(before + 1);
  });

  it('closes with Esc', async () => {
    const { api } = fakeApi();
    render(<HistoryApp api={api} />);
    await screen.findByText(/No calls yet/);
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(api.closeWindow).toHaveBeenCalledTimes(1);
  });

  it('says so when there are no calls yet', async () => {
    const { api } = fakeApi();
    render(<HistoryApp api={api} />);
    expect(await screen.findByText(/No calls yet/)).toBeTruthy();
  });
});
