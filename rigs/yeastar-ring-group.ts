/**
 * A Yeastar P-Series ring group call as a real PBX reports it (docs/phone-systems/
 * yeastar-p-series.md section 5: one member per 30011 report), for the relay's tests and its
 * benchmark (bench/yeastar-call-memory.ts), so both feed the decoder the same sequence.
 */
export const SN = '3631A2124XXX';
export const CUSTOMER = '+4930123456';

const ext = (number: string, status: string) => ({
  extension: {
    number,
    channel_id: `PJSIP/${number}-0000002${number.slice(-1)}`,
    member_status: status,
    call_path: '6300',
  },
});
const inbound = (status: string) => ({
  inbound: {
    from: CUSTOMER,
    to: '5503301',
    trunk_name: 'SIP-Main',
    channel_id: 'PJSIP/SIP-Main-00000020',
    member_status: status,
    call_path: '6300',
  },
});
/** A 30011 report listing one member, as a real PBX sends it (doc section 5). */
const report = (callId: string, member: object) =>
  JSON.stringify({
    type: 30011,
    sn: SN,
    msg: JSON.stringify({ call_id: callId, members: [member] }),
  });
const record = (callId: string, to: string, status: string) =>
  JSON.stringify({
    type: 30012,
    sn: SN,
    msg: JSON.stringify({
      call_id: callId,
      time_start: '2026-11-28 09:00:00',
      call_from: CUSTOMER,
      call_to: to,
      call_duration: 40,
      talk_duration: 31,
      status,
      type: 'Inbound',
    }),
  });

/**
 * A ring group (6300) of 101, 102 and 103 on an outside call, one member a report: the caller,
 * three rings, 102 answers (the others stop ringing: the group cancels them), the legs hang up, a
 * call record; then the captured calls A and B of a real P570, as they arrived.
 */
export function ringGroupCall(callId: string): string[] {
  return [
    report(callId, inbound('ALERT')),
    report(callId, ext('101', 'RING')),
    report(callId, ext('102', 'RING')),
    report(callId, ext('103', 'RING')),
    report(callId, ext('102', 'ANSWER')),
    report(callId, inbound('ANSWERED')),
    report(callId, ext('101', 'BYE')),
    report(callId, ext('103', 'BYE')),
    report(callId, ext('102', 'BYE')),
    report(callId, inbound('BYE')),
    record(callId, '102', 'ANSWERED'),
  ];
}
