/**
 * Call links from outside (issue 38): the launch that carries one reaches the one answer (second
 * instance's command line, macOS open-url, during start-up too), and the confirmation box never
 * dials on a stray Enter or Escape.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { listenForSecondLaunches } from '../../src-main/electron/second-launch.ts';
import { confirmDial, dialConfirmOptions } from '../../src-main/electron/dial-confirm.ts';
import { fixedTranslator } from '../../src-shared/i18n/locale-state.ts';
import { silentLogger } from '../../src-shared/process/log.ts';

function fakeApp() {
  const app = new EventEmitter();
  return app as EventEmitter & Parameters<typeof listenForSecondLaunches>[0];
}

describe('second launches and open-url', () => {
  it('hands the answer each launch’s arguments, and macOS’ link as one argument', () => {
    const app = fakeApp();
    const launches = listenForSecondLaunches(app);
    const got: (readonly string[])[] = [];
    launches.answerWith((argv) => got.push(argv));
    app.emit('second-instance', {}, ['/opt/Screenpop/screenpop', 'tel:+14155550123'], '/');
    let prevented = false;
    app.emit('open-url', { preventDefault: () => (prevented = true) }, 'callto://+14155550123');
    expect(got).toEqual([
      ['/opt/Screenpop/screenpop', 'tel:+14155550123'],
      ['callto://+14155550123'],
    ]);
    expect(prevented).toBe(true);
  });

  it('keeps the first few launches that come during start-up, and no more', () => {
    const app = fakeApp();
    const launches = listenForSecondLaunches(app);
    for (let i = 0; i < 50; i++) app.emit('second-instance', {}, ['x', `tel:${1000 + i}`]);
    app.emit('second-instance'); // an old Electron or a test: no command line at all
    const got: (readonly string[])[] = [];
    launches.answerWith((argv) => got.push(argv));
    expect(got).toEqual([
      ['x', 'tel:1000'],
      ['x', 'tel:1001'],
      ['x', 'tel:1002'],
      ['x', 'tel:1003'],
    ]);
  });
});

describe('the confirmation box', () => {
  const english = fixedTranslator('en');

  it('shows the number, Cancel first, Cancel the default and the Escape button', () => {
    const o = dialConfirmOptions(english, '+44 20 7946 0000');
    expect(o.message).toContain('+44 20 7946 0000');
    expect(o.buttons).toEqual(['Cancel', 'Call']);
    expect(o.defaultId).toBe(0);
    expect(o.cancelId).toBe(0);
  });

  it('says it in Arabic, the number kept left-to-right inside the sentence', () => {
    const o = dialConfirmOptions(fixedTranslator('ar'), '+44 20 7946 0000');
    expect(o.message).toMatch(/[\u0600-\u06ff]/);
    expect(o.message).toContain('\u2068+44 20 7946 0000\u2069');
    expect(o.buttons).toEqual(['إلغاء', 'اتصال']);
  });

  it.each([
    [{ response: 1 }, true],
    [{ response: 0 }, false],
    [{ response: 7 }, false],
  ])('answers %j → dial %s', async (answer, dial) => {
    const dialog = { showMessageBox: async () => ({ ...answer, checkboxChecked: false }) };
    expect(
      await confirmDial({ dialog, language: english, logger: silentLogger }, '+1 415 555 0123'),
    ).toBe(dial);
  });

  it('a box that cannot open is a Cancel', async () => {
    const dialog = {
      showMessageBox: async () => {
        throw new Error('no display');
      },
    };
    expect(await confirmDial({ dialog, language: english, logger: silentLogger }, '101')).toBe(
      false,
    );
  });
});
