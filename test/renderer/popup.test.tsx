// @vitest-environment jsdom
/**
 * The popup's bookkeeping in jsdom: which list wins when main's answer and a push race, each ring
 * announced once, a dismissed call stays hidden while main still lists it. Layout, keys and
 * hostile text are covered in Chromium (test/browser/popup.test.ts).
 */
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallCard } from '../../src-main/ipc/contract.ts';
import { PopupApp } from '../../src-renderer/popup/PopupApp.tsx';
import { fakeApi } from './fake-api.ts';

afterEach(cleanup);

function card(callId: string, callerName: string, startedAt: number, state = 'ringing'): CallCard {
  return {
    kind: 'call',
    callId,
    from: '+14155550123',
    fromDisplay: '+1 415-555-0123',
    callerName,
    callerCompany: null,
    numberKind: null,
    nameSource: 'contacts',
    crmLookup: null,
    group: null,
    to: '101',
    toDisplay: '101',
    toName: null,
    startedAt,
    endedAt: state === 'ringing' ? null : startedAt + 1000,
    state,
    outcome: state === 'ringing' ? 'ringing' : 'answered',
    canOpenCrm: true,
  };
}

const shown = () => screen.queryAllByRole('listitem').map((li) => li.getAttribute('data-call-id'));

describe('popup', () => {
  it('keeps a push that arrived before main answered popup:ready', async () => {
    const { api, emit } = fakeApi();
    let answer: (cards: CallCard[]) => void = () => undefined;
    api.popupReady.mockReturnValue(new Promise((resolve) => (answer = resolve)));
    render(<PopupApp api={api} />);
    act(() => emit('popup:calls', [card('new', 'Ada Lovelace', 2000)]));
    await act(async () => answer([card('old', 'Grace Hopper', 1000)]));
    expect(shown()).toEqual(['new']);
  });

  it('announces each new ring once, the newest when several arrive together', async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    const alert = screen.getByRole('alert');
    act(() =>
      emit('popup:calls', [card('a', 'Ada Lovelace', 1000), card('b', 'Grace Hopper', 2000)]),
    );
    expect(alert.textContent).toBe('Incoming call from Grace Hopper, to Ext. 101');
    act(() =>
      emit('popup:calls', [
        card('a', 'Ada Lovelace', 1000, 'answered'),
        card('b', 'Grace Hopper', 2000),
      ]),
    );
    expect(alert.textContent).toBe('Incoming call from Grace Hopper, to Ext. 101');
    act(() =>
      emit('popup:calls', [card('b', 'Grace Hopper', 2000), card('c', 'Katherine Johnson', 3000)]),
    );
    expect(alert.textContent).toBe('Incoming call from Katherine Johnson, to Ext. 101');
    expect(shown()).toEqual(['c', 'b']);
  });

  it('says the queue or ring group the call came through by its name, as text; none when unknown', async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    act(() =>
      emit('popup:calls', [
        { ...card('a', 'Ada Lovelace', 1000), group: { kind: 'queue', name: '<i>Sales</i>' } },
        { ...card('b', 'Grace Hopper', 2000), group: { kind: 'ring-group', name: 'Reception' } },
        card('c', 'Katherine Johnson', 3000),
      ]),
    );
    expect(screen.getAllByTestId('call-group').map((e) => e.textContent)).toEqual([
      'Ring groupReception',
      'Queue<i>Sales</i>',
    ]);
    expect(document.querySelector('[data-call-id="c"] [data-testid="call-group"]')).toBeNull();
  });

  it("shows a contact's company and what the number is to them, as text", async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    act(() =>
      emit('popup:calls', [
        {
          ...card('a', 'Ada Lovelace', 1000),
          callerCompany: '<b>Analytical</b> Engines',
          numberKind: 'mobile',
        },
        { ...card('b', 'Grace Hopper', 2000), numberKind: 'other' },
      ]),
    );
    expect(screen.getByTestId('caller-company').textContent).toBe('<b>Analytical</b> Engines');
    // "other" says nothing: only the mobile number is labelled.
    expect(screen.getAllByTestId('number-kind').map((e) => e.textContent)).toEqual(['mobile']);
  });

  it('says who transferred a call, as text, under the original caller', async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    act(() =>
      emit('popup:calls', [
        { ...card('a', 'Ada Lovelace', 1000), transferredBy: '<i>Grace</i> Hopper' },
        card('b', 'Katherine Johnson', 2000),
      ]),
    );
    const said = screen.getAllByTestId('transferred-by');
    expect(said.map((e) => e.textContent)).toEqual(['Transferred by<i>Grace</i> Hopper']);
    expect(screen.getByTestId('transferred-by-name').textContent).toBe('<i>Grace</i> Hopper');
  });

  it('says when the phone system did not report the caller, and the remedy', async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    act(() =>
      emit('popup:calls', [
        { ...card('a', 'Ada Lovelace', 1000), callerUnseen: true },
        card('b', 'Katherine Johnson', 2000),
      ]),
    );
    const said = screen.getAllByTestId('caller-unseen');
    expect(said).toHaveLength(1);
    expect(said[0]!.textContent).toMatch(/did not say who is calling.*Call Status Monitor/);
  });

  it('hides a dismissed call at once and while main still lists it', async () => {
    const { api, emit } = fakeApi();
    render(<PopupApp api={api} />);
    await waitFor(() => expect(api.popupReady).toHaveBeenCalled());
    const calls = [card('a', 'Ada Lovelace', 1000), card('b', 'Grace Hopper', 2000)];
    act(() => emit('popup:calls', calls));
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss call from Grace Hopper' }));
    expect(api.dismiss).toHaveBeenCalledWith('b');
    expect(shown()).toEqual(['a']);
    act(() => emit('popup:calls', calls));
    expect(shown()).toEqual(['a']);
  });
});
