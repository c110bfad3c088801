/**
 * The call log's queue in the Settings window's status (issue 39 item 4), in Chromium: the words
 * the runtime said (a 403 stop with its remedy, the calls waiting), shown as text, warning tone.
 */
import { expect, it } from 'vitest';
import type { StatusView } from '../../src-main/ipc/contract.ts';
import { connectedStatus, connectedView, fixture } from '../../rigs/browser/fixtures.ts';
import { openPage, screenshot } from '../../rigs/browser/page.ts';
import { browserSuite } from './support/suite.ts';

const STOPPED: StatusView = {
  ...connectedStatus,
  callLog: {
    waiting: '2 calls are waiting to be logged in the CRM; the oldest for 8 min.',
    problem: {
      reason:
        'Calls are not being logged: the CRM token may not write calls (a missing write scope).',
      remedy:
        'Give the token the scope to write calls (HubSpot: crm.objects.contacts.write) or enter one that has it in Settings.',
    },
  },
};

browserSuite('the call log in the Settings status, in Chromium', ({ browser, origin }) => {
  it('shows the stop with its remedy and the calls waiting (in the warning notice)', async () => {
    const { page } = await openPage(
      browser(),
      origin(),
      'settings',
      fixture({ settings: connectedView, status: STOPPED }),
      { viewport: { width: 560, height: 900 } },
    );
    const problem = page.getByTestId('status-call-log-problem');
    await expect.poll(() => problem.count()).toBe(1);
    expect(await problem.textContent()).toContain('missing write scope');
    expect(await problem.textContent()).toContain('What to do');
    expect(await page.getByTestId('status-call-log-waiting').textContent()).toBe(
      '2 calls are waiting to be logged in the CRM; the oldest for 8 min.',
    );
    await screenshot(page, 'settings-call-log-stopped');
  });
});
