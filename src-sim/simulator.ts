import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { systemClock } from '../src-shared/process/clock.ts';
import type {
  Envelope,
  FailHttpOptions,
  Simulator,
  SimulatorOptions,
  TrafficOptions,
} from './types.ts';
import { createScaledClock } from './scaled-clock.ts';
import { Rng } from './rng.ts';
import { createDirectory, createPbxLists } from './directory.ts';
import { Credentials, publicKey } from './credentials.ts';
import { createStats } from './stats.ts';
import { Dispatcher } from './dispatcher.ts';
import { MAX_BUFFERED_BYTES, SubscribeHub, SUBSCRIBE_PATH } from './subscribe.ts';
import { Webhooks } from './webhooks.ts';
import { NoticeBook } from './notices.ts';
import { CallBook } from './calls.ts';
import { API_PREFIX, handleApi } from './api-routes.ts';
import type { HttpFault } from './api-routes.ts';
import { CONTROL_PREFIX, handleControl } from './control-routes.ts';
import { TrafficGenerator } from './traffic.ts';
import { ERR, rejectUpgrade, sendError } from './errors.ts';
import { simDialect } from './phone-system.ts';
import { YeastarCallBook } from './yeastar-calls.ts';
import type { SimCallApi } from './api-routes.ts';

/** Assembles the simulator's parts behind one HTTP server (API, subscribe WebSocket, control surface). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const tenant = options.tenant ?? 'acme';
  const seed = options.seed ?? 1;
  const clock = createScaledClock(options.clock ?? systemClock, options.clockSpeed ?? 1);
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const extensionCount = options.extensions ?? 20;
  if (!Number.isInteger(extensionCount) || extensionCount < 0 || extensionCount > 8999)
    throw new RangeError('extensions must be an integer from 0 to 8999');
  const instanceId = options.instanceId ?? randomBytes(4).toString('hex');
  if (!/^[A-Za-z0-9]{1,32}$/.test(instanceId))
    throw new RangeError('instanceId must be 1-32 letters or digits');

  const rng = new Rng(seed);
  const keyRng = rng.fork(1);
  const directoryRng = rng.fork(2);
  const trafficRng = rng.fork(3);
  const reportStyleRng = rng.fork(4);

  const stats = createStats();
  const credentials = new Credentials(
    clock,
    keyRng,
    tenant,
    options.accessTokenLifetimeSec,
    options.tokenRule,
  );
  const mainKey = credentials.createKey({ name: 'Screenpop' });
  const extensions = createDirectory(extensionCount, tenant, directoryRng);

  let fault:
    | (Required<Pick<FailHttpOptions, 'status' | 'count' | 'target'>> & { retryAfterSec?: number })
    | null = null;
  const takeFault = (kind: 'api' | 'handshake'): HttpFault | null => {
    if (!fault || fault.count <= 0 || (fault.target !== 'all' && fault.target !== kind))
      return null;
    fault.count--;
    const taken: HttpFault = { status: fault.status };
    const retryAfter = fault.retryAfterSec ?? (fault.status === 429 ? 1 : undefined);
    if (retryAfter !== undefined) taken.retryAfterSec = retryAfter;
    if (fault.count <= 0) fault = null;
    return taken;
  };

  const phoneSystem = options.phoneSystem ?? 'standard';
  if (options.reportStyle !== undefined && phoneSystem !== 'yeastar-p-series')
    throw new RangeError("reportStyle is for phoneSystem 'yeastar-p-series' only");
  const dialect = simDialect(phoneSystem);
  // A Yeastar PBX's queues, ring groups and company contacts (its API's lists).
  const pbxLists = phoneSystem === 'yeastar-p-series' ? createPbxLists(extensions) : undefined;
  const hub = new SubscribeHub({
    clock,
    credentials,
    stats,
    dialect,
    idleTimeoutMs,
    maxBufferedBytes: options.maxBufferedBytes ?? MAX_BUFFERED_BYTES,
    takeHandshakeFault: () => takeFault('handshake'),
  });
  credentials.onTokensEnded(() => hub.expireEnded());
  const webhooks = new Webhooks(clock, stats, tenant, dialect);
  const dispatcher = new Dispatcher({
    clock,
    tenant,
    timestampUnit: options.timestampUnit ?? 'ms',
    instanceId,
    stats,
    targets: [{ send: (to, event, payload) => hub.broadcast(to, event, payload) }, webhooks],
    encode: dialect.encode,
  });
  const twoDevices = new Set(
    options.twoDevices ??
      extensions
        .map((e) => e.number)
        .filter((n) => Number(n) >= 104 && (Number(n) - 100) % 4 === 0),
  );
  const calls =
    phoneSystem === 'yeastar-p-series'
      ? new YeastarCallBook(dispatcher, instanceId, {
          isExtension: (n) => extensions.some((e) => e.number === n),
          devicesOf: (n) => (twoDevices.has(n) ? 2 : 1),
          now: () => clock.now(),
          reportStyle: options.reportStyle ?? 'member',
          rng: reportStyleRng,
        })
      : new CallBook(dispatcher, instanceId);
  const notices = new NoticeBook(dispatcher, instanceId, () => clock.now(), phoneSystem);
  const traffic = new TrafficGenerator({
    clock,
    rng: trafficRng,
    calls,
    extensions,
    // Yeastar: some calls come through the PBX's queues and ring groups (their numbers).
    ...(pbxLists && {
      groups: [...pbxLists.ringGroups, ...pbxLists.queues].map((g) => String(g.number)),
    }),
  });

  const controlEnabled = options.control ?? true;
  // The control routes drive the finished Simulator object, which exists only once the port is known.
  const ref: { sim?: Simulator } = {};
  const handler: http.RequestListener = (req, res) => {
    // The Date header reads the simulator's clock, like the event timestamps: a client that reads
    // the server's clock from it (events/server-clock.ts) sees one clock, fake or scaled alike.
    res.sendDate = false;
    res.setHeader('Date', new Date(clock.now()).toUTCString());
    const path = req.url ?? '/';
    if (path.startsWith(API_PREFIX)) {
      void handleApi(req, res, {
        credentials,
        stats,
        dialect,
        extensions: () => extensions,
        takeApiFault: () => takeFault('api'),
        ...(pbxLists && { pbxLists: () => pbxLists }),
        ...(calls instanceof YeastarCallBook && { calls: callApiOf(calls) }),
      });
    } else if (controlEnabled && ref.sim && path.startsWith(CONTROL_PREFIX)) {
      void handleControl(req, res, ref.sim);
    } else {
      req.resume();
      sendError(res, ERR.NOT_FOUND);
    }
  };
  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : http.createServer(handler);
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '').split('?')[0];
    if (path === SUBSCRIBE_PATH) hub.handleUpgrade(req, socket, head);
    else rejectUpgrade(socket, ERR.NOT_FOUND);
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `${options.tls ? 'https' : 'http'}://${urlHost}:${address.port}`;

  let closed = false;
  const sim: Simulator = {
    baseUrl,
    tenant,
    phoneSystem,
    apiKey: publicKey(mainKey),
    clock,
    extensions,
    createApiKey: (opts) => publicKey(credentials.createKey(opts)),
    ring: (opts) => calls.ring(opts),
    setCallState: (callId, state, opts) => calls.setState(callId, state, opts),
    setUacstaPhone: (extension, ipAddress) => {
      if (!(calls instanceof YeastarCallBook))
        throw new TypeError('uaCSTA phones are a Yeastar P-Series feature');
      calls.setUacstaPhone(extension, ipAddress);
    },
    transfer: (callId, opts) => calls.transfer(callId, opts),
    voicemail: (opts) => notices.voicemail(opts),
    sms: (opts) => notices.sms(opts),
    setTrunkStatus: (trunk, status) => notices.trunkStatus(trunk, status),
    setPresence: (extension, status) => {
      const envelope = notices.presence(extension, status);
      // The extension list reports the same presence from now on.
      const ext = extensions.find((e) => e.number === extension) as
        { presence_status: string } | undefined;
      if (ext) ext.presence_status = status;
      return envelope;
    },
    emit: (event, data, opts): Envelope => dispatcher.emit(event, data, opts),
    emitRaw: (text, opts) => dispatcher.emitRaw(text, opts),
    addWebhook: (opts) => webhooks.add(opts),
    removeWebhook: (id) => webhooks.remove(id),
    listWebhooks: () => webhooks.list(),
    closeAllSockets: (code = 1001) => hub.closeAll(code),
    stallSockets: () => hub.stallAll(),
    duplicateNext: (n, copies) => dispatcher.duplicateNext(n, copies),
    reorderNext: (n) => dispatcher.reorderNext(n),
    failHttp: (opts) => {
      if (![500, 502, 503, 429].includes(opts.status))
        throw new RangeError('status must be 500, 502, 503 or 429');
      if (!Number.isInteger(opts.count) || opts.count < 0)
        throw new RangeError('count must be a non-negative integer');
      if (
        opts.retryAfterSec !== undefined &&
        !(Number.isInteger(opts.retryAfterSec) && opts.retryAfterSec >= 0)
      )
        throw new RangeError('retryAfterSec must be a non-negative integer');
      const target = opts.target ?? 'api';
      if (!['api', 'handshake', 'all'].includes(target))
        throw new RangeError("target must be 'api', 'handshake' or 'all'");
      fault =
        opts.count > 0
          ? { status: opts.status, count: opts.count, target, retryAfterSec: opts.retryAfterSec }
          : null;
    },
    revokeKey: (key) => {
      credentials.revoke(key);
      hub.closeKey(key);
    },
    setAllowlist: (key, ips) => credentials.setAllowlist(key, ips),
    restart: () => {
      hub.closeAll(1012);
      credentials.forgetAll();
    },
    expireAllTokens: () => {
      credentials.expireAll();
      hub.expireAll();
    },
    startTraffic: (opts: TrafficOptions) => traffic.start(opts),
    stopTraffic: () => traffic.stop(),
    stats: () => ({
      ...stats,
      tokensValid: credentials.validAccessTotal(),
      tokensValidPeak: credentials.peakValid,
    }),
    onSent: (listener) => dispatcher.onSent(listener),
    close: async () => {
      if (closed) return;
      closed = true;
      traffic.stop();
      webhooks.close();
      hub.shutdown();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  ref.sim = sim;
  return sim;
}

/** The call API's routes over a Yeastar call book (doc section 10). */
function callApiOf(book: YeastarCallBook): SimCallApi {
  return {
    isExtension: (n) => book.isExtension(n),
    dial: (caller, callee) => book.dial(caller, callee),
    byChannel: (channel) => book.byChannel(channel),
    hangup: (callId, number) => book.setState(callId, 'ended', { to: number }),
    transfer: (callId, opts) => book.transfer(callId, opts),
    attendedOperate: (callId, from, operate) => book.attendedOperate(callId, from, operate),
    otherExtension: (callId, number) => book.otherExtension(callId, number),
    query: (by) => book.query(by),
    uacsta: (operation, extension, id, ip) => book.uacsta(operation, extension, id, ip),
  };
}
