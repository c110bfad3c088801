/**
 * HubSpot's Calls engagements, on the dated API version the lookup uses (hubspot.ts,
 * HUBSPOT_API_VERSION): create `POST /crm/objects/<version>/calls` associated with the contact the
 * lookup found (HubSpot-defined association type 194, call to contact), update
 * `PATCH /crm/objects/<version>/calls/{id}`, and the search for a marker after an uncertain
 * create `POST /crm/objects/<version>/calls/search` (a CONTAINS_TOKEN filter on `hs_call_body`).
 * The facts, each with its page: docs/crm/hubspot.md, "Logging calls".
 *
 * - `hs_timestamp` (the only required property): the call's start, ISO 8601 UTC.
 * - `hs_call_duration`: talk time in milliseconds; `hs_call_direction` INBOUND / OUTBOUND;
 *   `hs_call_status` from HubSpot's fixed list (COMPLETED when answered, NO_ANSWER when missed,
 *   ...); `hs_call_from_number` / `hs_call_to_number`.
 * - `hs_call_disposition` is a GUID, never a word: the account's outcomes are read once
 *   (`GET /calling/v1/dispositions`, id and label) and the agent's label sent as its GUID when the
 *   account has it; otherwise no disposition is sent (the label stays in the body's text).
 * - `hs_call_body` is HTML: the note is escaped (& < > " '), line breaks become <br>, and the
 *   marker is its last paragraph.
 * - Writing calls needs a write scope the lookup's read-only token lacks (HubSpot names it
 *   `crm.objects.contacts.write`: calls are engagements on contacts); a 403 says so in words.
 */
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import { CrmError } from '../crm/connector.ts';
import { exchangeJson, retryAfterMs, statusError, type JsonResponse } from '../crm/http.ts';
import { HUBSPOT_API, HUBSPOT_API_VERSION, hubspotLimit } from '../crm/hubspot.ts';
import type { CallLogRecord } from '../ports/call-log.ts';
import type { CallLogWriter } from './queue.ts';

export const HUBSPOT_CALLS_PATH = `/crm/objects/${HUBSPOT_API_VERSION}/calls`;
export const HUBSPOT_DISPOSITIONS_PATH = '/calling/v1/dispositions';
/** HubSpot-defined association type of a call to a contact. */
export const CALL_TO_CONTACT = 194;
/** The scope a token needs to write calls (the lookup's token has the read scope only). */
export const CALLS_WRITE_SCOPE = 'crm.objects.contacts.write';

export interface HubSpotCallWriterDeps {
  fetch: typeof fetch;
  clock: Clock;
  secrets: SecretRegistry;
  token: () => Promise<string | null>;
  apiBase?: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** The note as HubSpot's HTML body: escaped, line breaks kept, the marker last. */
export function hubspotCallBody(record: CallLogRecord, marker: string): string {
  const note = (record.note ?? '').slice(0, 2_000);
  const html = note.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c).replace(/\r?\n/g, '<br>');
  return `${html ? `<p>${html}</p>` : ''}<p>Screenpop ${marker}</p>`;
}

/** HubSpot's status for the call's one outcome. */
export function hubspotCallStatus(record: CallLogRecord): string {
  switch (record.outcome) {
    case 'answered':
    case 'answered-elsewhere':
      return 'COMPLETED';
    case 'missed':
    case 'voicemail':
      return 'NO_ANSWER';
    case 'declined':
      return 'BUSY';
    case 'ringing':
      return 'RINGING';
    default:
      return record.answeredAt !== undefined ? 'COMPLETED' : 'NO_ANSWER';
  }
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class HubSpotCallWriter implements CallLogWriter {
  readonly kind = 'hubspot' as const;
  private readonly d: HubSpotCallWriterDeps;
  private readonly base: string;
  private dispositions: Promise<Map<string, string>> | null = null;

  constructor(deps: HubSpotCallWriterDeps) {
    this.d = deps;
    this.base = (deps.apiBase ?? HUBSPOT_API).replace(/\/+$/, '');
  }

  async create(record: CallLogRecord, marker: string, signal: AbortSignal): Promise<string> {
    const properties = await this.properties(record, marker, signal);
    const body: Record<string, unknown> = { properties };
    if (record.contactId && /^\d{1,20}$/.test(record.contactId))
      body.associations = [
        {
          to: { id: record.contactId },
          types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: CALL_TO_CONTACT }],
        },
      ];
    const answer = await this.send('POST', HUBSPOT_CALLS_PATH, body, signal);
    const id = (answer.body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || !/^\d{1,20}$/.test(id))
      throw new CrmError('bad-answer', 'the HubSpot answer has no call id', {
        status: answer.status,
      });
    return id;
  }

  async update(
    crmId: string,
    record: CallLogRecord,
    marker: string,
    signal: AbortSignal,
  ): Promise<void> {
    if (!/^\d{1,20}$/.test(crmId))
      throw new CrmError('bad-answer', 'a journal id is not HubSpot’s');
    const properties = await this.properties(record, marker, signal);
    await this.send('PATCH', `${HUBSPOT_CALLS_PATH}/${crmId}`, { properties }, signal);
  }

  async find(marker: string, signal: AbortSignal): Promise<string | null> {
    const answer = await this.send(
      'POST',
      `${HUBSPOT_CALLS_PATH}/search`,
      {
        filterGroups: [
          {
            filters: [{ propertyName: 'hs_call_body', operator: 'CONTAINS_TOKEN', value: marker }],
          },
        ],
        properties: ['hs_call_body'],
        limit: 1,
      },
      signal,
    );
    const results = (answer.body as { results?: unknown } | undefined)?.results;
    if (!Array.isArray(results))
      throw new CrmError('bad-answer', 'the HubSpot answer has no results list', {
        status: answer.status,
      });
    const id = (results[0] as { id?: unknown } | undefined)?.id;
    return typeof id === 'string' && /^\d{1,20}$/.test(id) ? id : null;
  }

  private async properties(
    record: CallLogRecord,
    marker: string,
    signal: AbortSignal,
  ): Promise<Record<string, string>> {
    const p: Record<string, string> = {
      hs_timestamp: new Date(record.startedAt).toISOString(),
      hs_call_direction: record.direction === 'outbound' ? 'OUTBOUND' : 'INBOUND',
      hs_call_duration: String(Math.max(0, Math.round(record.durationMs))),
      hs_call_status: hubspotCallStatus(record),
      hs_call_from_number: record.from,
      hs_call_to_number: record.to,
      hs_call_body: hubspotCallBody(record, marker),
    };
    const label = record.disposition?.trim().toLowerCase();
    if (label) {
      const guid = (await this.accountDispositions(signal)).get(label);
      if (guid) p.hs_call_disposition = guid;
    }
    return p;
  }

  /** The account's call outcomes, label (lower case) to GUID; read once (again after a failure). */
  private accountDispositions(signal: AbortSignal): Promise<Map<string, string>> {
    this.dispositions ??= this.send('GET', HUBSPOT_DISPOSITIONS_PATH, undefined, signal).then(
      (answer) => {
        const map = new Map<string, string>();
        if (Array.isArray(answer.body))
          for (const item of answer.body.slice(0, 200) as Array<Record<string, unknown>>) {
            const { id, label, deleted } = item ?? {};
            if (typeof id === 'string' && GUID.test(id) && typeof label === 'string' && !deleted)
              map.set(label.trim().toLowerCase().slice(0, 100), id);
          }
        return map;
      },
      (error: unknown) => {
        this.dispositions = null;
        throw error;
      },
    );
    return this.dispositions;
  }

  private async send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: unknown,
    signal: AbortSignal,
  ): Promise<JsonResponse> {
    const token = await this.d.token();
    if (!token) throw new CrmError('no-credentials', 'no HubSpot access token is stored');
    this.d.secrets.add(token);
    const answer = await exchangeJson(
      this.d.fetch,
      `${this.base}${path}`,
      {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      },
      signal,
    );
    const limit = hubspotLimit(answer.status, answer.headers, answer.body);
    if (limit)
      throw new CrmError('rate-limited', `HubSpot's ${limit.policy} limit was reached`, {
        status: 429,
        retryAfterMs: retryAfterMs(answer.headers, this.d.clock.now()) ?? limit.pauseMs,
        daily: limit.daily,
      });
    if (answer.status === 403)
      throw new CrmError(
        'forbidden',
        `the HubSpot token may not write calls (it needs the scope ${CALLS_WRITE_SCOPE})`,
        { status: 403 },
      );
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 401)
      throw new CrmError('bad-answer', `HubSpot refused the call (${answer.status})`, {
        status: answer.status,
      });
    if (answer.status < 200 || answer.status >= 300) throw statusError(answer.status, undefined);
    return answer;
  }
}
