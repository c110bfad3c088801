// @vitest-environment jsdom
/** The history window: newest first, outcomes in words, missed calls marked, seen on open. */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../src-main/ipc/contract.ts';
import { HistoryApp } from '../../src-renderer/history/HistoryApp.tsx';
import { fakeApi, savedView } from './fake-api.ts';

afterEach(cleanup);

const now = Date.now();
const entries: HistoryEntry[] = [
  {
    kind: 'call',
    toDisplay: '101',
    toName: null,
    callerCompany: 'Navy <b>Research</b>',
    numberKind: null,
    callId: 'old',
    from: '205',
    fromDisplay: '205',
    callerName: 'Grace Hopper',
    to: '101',
    startedAt: now - 3_600_000,
    endedAt: now - 3_000_000,
    outcome: 'answered',
    seen: true,
    talkSec: 120,
  },
  {
    kind: 'call',
    toDisplay: '101',
    toName: null,
    callerCompany: null,
    numberKind: null,
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
    callerCompany: null,
    numberKind: null,
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
    expect(items[0]?.textContent).toContain('Ringing');
    expect(items[1]?.textContent).toContain('Missed');
    expect(items[1]?.textContent).toContain('New');
    expect(items[1]?.className).toContain('entry--missed');
    expect(items[2]?.textContent).toContain('Answered');
    // The caller's company (from the contacts file or the CRM), as text.
    expect(within(items[2] as HTMLElement).getByTestId('history-company').textContent).toBe(
      'Navy <b>Research</b>',
    );
    expect(within(items[1] as HTMLElement).queryByTestId('history-company')).toBeNull();
    // A duration in words, never clock-like ("10:00" would read as a time of day).
    // How long the user talked, where the phone system's record of the call said.
    expect(within(items[2] as HTMLElement).getByTestId('history-duration').textContent).toBe(
      'after 10 min, talked 2 min',
    );
    expect(within(items[1] as HTMLElement).getByTestId('history-duration').textContent).toBe(
      'after 20 sec',
    );
    // Numbers read as in the popup: the extension labelled, the line that rang.
    expect(within(items[2] as HTMLElement).getByTestId('history-number').textContent).toBe(
      'Ext. 205',
    );
    expect(within(items[2] as HTMLElement).getByTestId('history-called').textContent).toBe(
      'CalledExt. 101',
    );
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

  it('searches names, companies and numbers whatever their spacing, and filters missed and answered calls', async () => {
    const { api } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    const ids = () =>
      screen.queryAllByRole('listitem').map((li) => li.getAttribute('data-call-id'));
    const search = screen.getByRole('searchbox', { name: 'Search' });
    fireEvent.change(search, { target: { value: '20 7946' } });
    expect(ids()).toEqual(['missed']);
    fireEvent.change(search, { target: { value: '+442079' } });
    expect(ids()).toEqual(['missed']);
    fireEvent.change(search, { target: { value: 'grace' } });
    expect(ids()).toEqual(['old']);
    // The company the contacts file or the CRM gave.
    fireEvent.change(search, { target: { value: 'navy research' } });
    expect(ids()).toEqual(['old']);
    fireEvent.change(search, { target: { value: '<script>' } });
    expect(ids()).toEqual(['live']);
    fireEvent.change(search, { target: { value: '' } });
    fireEvent.click(screen.getByRole('radio', { name: /Missed/ }));
    expect(ids()).toEqual(['missed']);
    fireEvent.click(screen.getByRole('radio', { name: /Answered/ }));
    expect(ids()).toEqual(['old']);
    fireEvent.change(search, { target: { value: 'nobody' } });
    expect(screen.getByText('No answered calls match “nobody”.')).toBeTruthy();
    // Esc in the search clears it instead of closing the window.
    fireEvent.keyDown(search, { key: 'Escape' });
    expect((search as HTMLInputElement).value).toBe('');
    expect(api.closeWindow).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('radio', { name: /All/ }));
    expect(ids()).toEqual(['live', 'missed', 'old']);
  });

  it('copies a row’s number and opens it in the CRM through main, with a CRM button only when a CRM link is set', async () => {
    const { api, emit } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    expect(screen.queryAllByRole('button', { name: /CRM/ })).toHaveLength(0);
    act(() =>
      emit('settings:changed', {
        ...savedView,
        settings: { ...savedView.settings, crmUrlTemplate: 'https://crm.example.com/?q={from}' },
      }),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Open in CRM Grace Hopper' }));
    expect(api.openHistoryCrm).toHaveBeenCalledWith('old');
    fireEvent.click(screen.getByRole('button', { name: 'Search CRM for +44 20 7946 0958' }));
    expect(api.openHistoryCrm).toHaveBeenLastCalledWith('missed');
    fireEvent.click(screen.getByRole('button', { name: 'Copy number of Grace Hopper' }));
    expect(api.copyHistoryNumber).toHaveBeenCalledWith('old');
    expect(
      await screen.findByRole('button', { name: 'Copied number of Grace Hopper' }),
    ).toBeTruthy();
  });

  it('exports the rows shown, and says where it saved them or why it could not', async () => {
    const { api } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    fireEvent.click(screen.getByRole('radio', { name: /Missed/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV…' }));
    await waitFor(() => expect(api.exportHistoryCsv).toHaveBeenCalledWith(['missed']));
    expect((await screen.findByTestId('export-status')).textContent).toBe(
      'Saved 1 call to calls.csv.',
    );
    api.exportHistoryCsv.mockResolvedValueOnce({ status: 'cancelled' });
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV…' }));
    await waitFor(() => expect(screen.queryByTestId('export-status')).toBeNull());
    api.exportHistoryCsv.mockResolvedValueOnce({
      status: 'failed',
      message: 'The file could not be written there.',
    });
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV…' }));
    expect(await screen.findByText('The file could not be written there.')).toBeTruthy();
    api.exportHistoryCsv.mockRejectedValueOnce(new Error('history:export-csv failed'));
    fireEvent.click(screen.getByRole('button', { name: 'Export CSV…' }));
    expect(await screen.findByText('The export did not work. Please try again.')).toBeTruthy();
  });
});

/** The row main's `history:select` or `history:selection` selected, if any. */
const current = () =>
  document.querySelector('li[aria-current="true"]')?.getAttribute('data-call-id');

describe('a notification click selects its item', () => {
  it('while the window opens: the selection comes before the list, and is applied once the list is in', async () => {
    const { api } = fakeApi();
    let answer: (items: HistoryEntry[]) => void = () => {};
    api.listHistory.mockReturnValue(new Promise((resolve) => (answer = resolve)));
    api.takeHistorySelection.mockResolvedValue('missed');
    render(<HistoryApp api={api} />);
    await waitFor(() => expect(api.takeHistorySelection).toHaveBeenCalledTimes(1));
    await act(async () => {}); // its answer is in; the list is not
    expect(current()).toBeUndefined();
    await act(async () => answer(entries));
    const row = await screen.findByRole('listitem', { current: true });
    expect(row.getAttribute('data-call-id')).toBe('missed');
    expect(document.activeElement).toBe(row);
    expect(screen.getByTestId('selected-news').textContent).toBe('Selected: +44 20 7946 0958');
  });

  it('while the window opens: the list comes first, then the selection', async () => {
    const { api } = fakeApi();
    let select: (id: string | null) => void = () => {};
    api.listHistory.mockResolvedValue(entries);
    api.takeHistorySelection.mockReturnValue(new Promise((resolve) => (select = resolve)));
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    expect(current()).toBeUndefined();
    await act(async () => select('old'));
    await waitFor(() => expect(current()).toBe('old'));
    expect(document.activeElement?.getAttribute('data-call-id')).toBe('old');
  });

  it('in an open window: a push selects the call, showing it if the filter or search hid it', async () => {
    const { api, emit } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    fireEvent.click(screen.getByRole('radio', { name: /Answered/ }));
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: 'grace' } });
    expect(screen.getAllByRole('listitem')).toHaveLength(1);
    act(() => emit('history:select', 'missed'));
    await waitFor(() => expect(current()).toBe('missed'));
    expect(screen.getAllByRole('listitem')).toHaveLength(3);
    expect((screen.getByRole('radio', { name: /^All/ }) as HTMLInputElement).checked).toBe(true);
    expect(document.activeElement?.getAttribute('data-call-id')).toBe('missed');
    // Another click moves the selection.
    act(() => emit('history:select', 'old'));
    await waitFor(() => expect(current()).toBe('old'));
    expect(document.querySelectorAll('li[aria-current]')).toHaveLength(1);
  });

  it('an id History does not know (pruned), or not an id at all, selects nothing and says nothing', async () => {
    const { api, emit } = fakeApi();
    api.listHistory.mockResolvedValue(entries);
    api.takeHistorySelection.mockResolvedValue('pruned-long-ago');
    render(<HistoryApp api={api} />);
    await screen.findByRole('list', { name: 'Calls, newest first' });
    await act(async () => {});
    expect(current()).toBeUndefined();
    act(() => emit('history:select', 'missed'));
    await waitFor(() => expect(current()).toBe('missed'));
    for (const bad of ['gone', 'x'.repeat(300), 42, { callId: 'old' }] as unknown as string[]) {
      act(() => emit('history:select', bad));
      expect(current()).toBeUndefined();
      expect(screen.queryByTestId('selected-news')).toBeNull();
    }
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getAllByRole('listitem')).toHaveLength(3);
  });
});
