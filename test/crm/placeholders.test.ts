/**
 * What a placeholder is, one rule (src-main/core/crm/placeholders.ts): the settings' check of the
 * CRM link, the link gate that fills it (app/crm-url.ts) and the policy's ring-action arguments
 * give the same verdict on the same template. Before, settings read `{...}` up to the first `}`
 * while the link gate read a name without braces, so `{a{from}` was refused by settings and
 * accepted by the gate.
 */
import { describe, expect, it } from 'vitest';
import { checkTemplate } from '../../src-main/core/links/crm-url.ts';
import { applyPatch, defaultSettings } from '../../src-main/core/settings/validate-settings.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';

const TAILS = [
  '{from}',
  '{a{from}',
  '{from}}',
  '{phone}',
  '{}',
  '{caller_name}{to}',
  '{{call_id}}',
];

const settingsAccept = (tail: string) =>
  applyPatch(defaultSettings(), { crmUrlTemplate: `https://crm.example.com/search?q=${tail}` }).ok;
const linkAccepts = (tail: string) =>
  checkTemplate(`https://crm.example.com/search?q=${tail}`, []).ok;
const policyAccepts = (tail: string) =>
  validatePolicy({ onRing: [{ run: '/usr/bin/true', args: [tail] }] }).problems.length === 0;

describe('a placeholder is one rule', () => {
  it.each(TAILS)('settings, the link gate and the policy agree on %s', (tail) => {
    const verdicts = {
      settings: settingsAccept(tail),
      link: linkAccepts(tail),
      policy: policyAccepts(tail),
    };
    expect(verdicts).toEqual({
      settings: verdicts.link,
      link: verdicts.link,
      policy: verdicts.link,
    });
  });

  it('names the known placeholders the same way in every refusal', () => {
    const refusal = checkTemplate('https://crm.example.com/?q={phone}', []);
    expect(refusal).toMatchObject({ ok: false });
    const problems = validatePolicy({
      onRing: [{ run: '/usr/bin/true', args: ['{phone}'] }],
    }).problems;
    expect(problems[0]?.message).toContain('{from}, {to}, {call_id}, {caller_name}');
  });
});
