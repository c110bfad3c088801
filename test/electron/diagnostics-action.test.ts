/**
 * The tray's "Save diagnostics…" (electron/diagnostics-action.ts) with the real archive writer: it
 * names the file by the day, writes a redacted archive and shows it; cancelled, it writes nothing;
 * a folder it cannot write to is logged and said in the user's language, never thrown.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Diagnostics } from '../../src-main/core/diagnostics/diagnostics.ts';
import { diagnosticsAction } from '../../src-main/electron/diagnostics-action.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('diagnostics-action-');
const NOW = Date.UTC(2026, 10, 24, 17, 0, 0);

function setup(answer: (name: string) => string | null) {
  const secrets = new SecretRegistry();
  secrets.add('ss_diag_secret_123');
  const diagnostics = new Diagnostics();
  diagnostics.add({ name: 'note', collect: () => ({ said: 'token ss_diag_secret_123' }) });
  const logger = memoryLogger(secrets);
  const asked: string[] = [];
  const shown: string[] = [];
  const boxes: [string, string][] = [];
  const save = diagnosticsAction({
    chooseDiagnosticsPath: async (name) => (asked.push(name), answer(name)),
    diagnostics,
    secrets,
    clock: { now: () => NOW } as never,
    logger,
    language: { current: () => createTranslator('de') },
    showItemInFolder: (p) => void shown.push(p),
    showErrorBox: (title, body) => void boxes.push([title, body]),
  });
  return { save, asked, shown, boxes, logger };
}

describe('Save diagnostics…', () => {
  it('writes the archive where the user chose, named by the day, and shows it', async () => {
    const t = setup((name) => join(tmp.path, name));
    await t.save();
    expect(t.asked).toEqual(['screenpop-diagnostics-2026-11-24.tar.gz']);
    expect(t.shown).toEqual([join(tmp.path, 'screenpop-diagnostics-2026-11-24.tar.gz')]);
    expect(existsSync(t.shown[0]!)).toBe(true);
    expect(t.boxes).toEqual([]);
  });

  it('cancelled: nothing written, nothing shown', async () => {
    const t = setup(() => null);
    await t.save();
    expect(t.shown).toEqual([]);
    expect(t.boxes).toEqual([]);
  });

  it('a folder it cannot write: logged, said in the user’s language, not thrown', async () => {
    const t = setup(() => join(tmp.path, 'no-such-folder', 'x.tar.gz'));
    await expect(t.save()).resolves.toBeUndefined();
    expect(t.boxes).toHaveLength(1);
    expect(t.boxes[0]![0]).toBe(createTranslator('de').t('desktop.diagnostics-failed.title'));
    expect(t.logger.records.some((r) => r.msg === 'diagnostics could not be saved')).toBe(true);
    expect(JSON.stringify(t.logger.records)).not.toContain('ss_diag_secret_123');
  });
});
