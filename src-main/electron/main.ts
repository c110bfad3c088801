/**
 * The composition root: the only place that knows every concrete class. It builds the core
 * (settings, keychain, service client, token manager, engine, directory, history, presenter; see
 * src-main/core/app/runtime.ts), the Electron adapters (tray, notifications, popup, windows,
 * openExternal, clipboard, power events) and the IPC handlers, and applies the security settings
 * before any window exists. Bundled by scripts/build-main.ts to dist/main/main.cjs.
 */
import { spawn } from 'node:child_process';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  nativeTheme,
  net,
  Notification,
  powerMonitor,
  protocol,
  screen,
  session,
  shell,
  Tray,
} from 'electron';
import { serviceConnectionFactory } from '../core/connection/connection.ts';
import { DesktopHealth } from '../core/app/desktop-health.ts';
import { HistoryStore } from '../core/history/history-store.ts';
import { QuitSequence } from '../core/app/quit-sequence.ts';
import { AppRuntime } from '../core/app/runtime.ts';
import { settingsPortFor } from '../core/settings-service/settings-port.ts';
import { spawnProgramRunner } from '../core/ring-actions/program-runner.ts';
import { RingActions } from '../core/ring-actions/ring-actions.ts';
import { OrganisationAccount } from '../core/org/org-account.ts';
import { CLAIM_DEVICE_FILE, ClaimDeviceStore } from '../core/org/claim-device.ts';
import { withOrganisationMode } from '../core/org/org-connection.ts';
import { LogRing } from '../core/diagnostics/bounded-log.ts';
import { Diagnostics, logSection } from '../core/diagnostics/diagnostics.ts';
import {
  aboutSection,
  connectionSection,
  connectionTestSection,
  policySection,
  keychainState,
  settingsSection,
} from '../core/diagnostics/sections.ts';
import {
  loadMachinePolicy,
  proxyPolicyOf,
  managedView,
  presetDefaults,
} from '../core/settings/policy.ts';
import { serviceProbe } from '../core/connection/service-probe.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { LastResort } from '../../src-shared/process/last-resort.ts';
import { fixedTranslator, LocaleState } from '../../src-shared/i18n/locale-state.ts';
import type { Translator } from '../../src-shared/i18n/translator.ts';
import {
  environmentLanguages,
  localeForSetting,
  resolveLocale,
} from '../../src-shared/i18n/locales.ts';
import {
  KeychainUnavailableError,
  KeytarCredentialStore,
} from '../core/credentials/keytar-store.ts';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { provisionSecret } from './store-secret.ts';
import { fileCursorStore } from '../core/relay-client/cursor-store.ts';
import { SettingsStore } from '../core/settings/settings-store.ts';
import type { Settings } from '../core/settings/types.ts';
import { proxyAccount, transportFor } from '../core/net/network.ts';
import { readCaText } from '../../src-shared/net/trust.ts';
import type { NetTransport } from '../../src-shared/net/transport.ts';
import { startDemo } from '../../src-sim/demo.ts';
import { launchEnvironment, type LaunchEnvironment } from './launch-environment.ts';
import { APP_SCHEME, AppOrigin, devServerOrigin } from './app-origin.ts';
import { contentSecurityPolicy } from '../../src-shared/ui/content-security-policy.ts';
import { applicationMenuTemplate } from './app-menu.ts';
import { registerAppProtocol } from './app-protocol.ts';
import { checkDesktop, storeSecretNeedsDisplay } from './desktop-checks.ts';
import { applyChromiumSwitches, devShmBytes } from './chromium-switches.ts';
import { NativeDialogs } from './dialogs.ts';
import { diagnosticsAction } from './diagnostics-action.ts';
import { CallLogQueue } from '../core/call-log/queue.ts';
import { settingsCallLogWriter } from '../core/call-log/build.ts';
import { SafeExternalOpener } from './external.ts';
import { registerIpcHandlers } from './ipc-handlers.ts';
import { TypedIpcMain } from './ipc-main.ts';
import { createAppLogger } from './logging.ts';
import { applyStartAtLogin } from './login-item.ts';
import { askWithMessageBox, checkApplicationsFolder, welcomeOnce } from './mac-first-start.ts';
import { installerRestarter } from './installer-restart.ts';
import { listenForSecondLaunches, type SecondLaunches } from './second-launch.ts';
import { confirmDial, sayDialRefused } from './dial-confirm.ts';
import { DIAL_LINK_SCHEMES, dialLinkInArgs } from '../core/links/dial-link.ts';
import { ElectronNotifier, UNSIGNED_MAC_WORDS } from './notifier.ts';
import { PopupWindow } from './popup-window.ts';
import { watchPower } from './power.ts';
import {
  addCspHeader,
  denyAllPermissions,
  hardenAllWebContents,
  secureWebPreferences,
} from './security.ts';
import { TrayController, trayIconFile, type TrayIconName } from './tray.ts';
import { startAgainAndExit } from './start-again.ts';
import { appUpdates } from './updates.ts';
import { relaunchUnderXWayland } from './xwayland-relaunch.ts';
import { applyAppIdentity, watchToastActivation } from './windows-toasts.ts';
import { AppWindows } from './windows.ts';

// Must happen before 'ready': app:// is a standard, secure origin ('self' in the CSP works, fetch works).
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);

// Chromium switches the machine needs (a small /dev/shm in a container); before 'ready'.
const switchesAdded = applyChromiumSwitches(app.commandLine, {
  platform: process.platform,
  devShmBytes: devShmBytes(process.platform),
});

// The words said on the terminal before the app has its settings, in the environment's language
// (built only when a line is written: building a translator parses its catalogue).
const terminalWords = (): Translator =>
  fixedTranslator(resolveLocale(environmentLanguages(process.env))).current();

if (process.argv.includes('--store-secret')) {
  // An administrator's script: `Screenpop --store-secret` with the secret on standard input.
  const t = terminalWords();
  if (storeSecretNeedsDisplay(process.platform, process.env, process.argv)) {
    process.stderr.write(`Screenpop: ${t.t('desktop.store-secret.no-display')}\n`);
    app.exit(2);
  } else void provisionSecret(t).then((code) => app.exit(code));
} else if (
  relaunchUnderXWayland(
    {
      platform: process.platform,
      packaged: app.isPackaged,
      env: process.env,
      argv: process.argv,
      commandLine: app.commandLine,
      execPath: process.execPath,
    },
    {
      spawn,
      exit: (code) => app.exit(code),
      stderr: (line) => process.stderr.write(line),
      words: { current: terminalWords },
    },
  )
) {
  // A native Wayland window: started again under XWayland (xwayland-relaunch.ts), before the lock.
} else if (!app.requestSingleInstanceLock()) {
  // Another Screenpop is running; it gets 'second-instance' and shows its settings.
  app.quit();
} else {
  applyAppIdentity(app, process.platform);
  app.whenReady().then(start).catch(startFailed);
}

/**
 * start() failed: say so and end. Carrying on would leave a process with no tray and no window
 * that holds the single-instance lock, so that every later launch only wakes the broken one.
 */
function startFailed(err: unknown): void {
  const error = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
  process.stderr.write(`Screenpop could not start: ${error}\n`);
  let log: string | null = null;
  try {
    const logs = join(app.getPath('userData'), 'logs');
    createAppLogger(logs, new SecretRegistry().hideHome(homedir()), false).error(
      'start-up failed',
      { error: err },
    );
    log = join(logs, 'screenpop.log');
  } catch {
    // No data folder: the words below still go out.
  }
  try {
    const t = fixedTranslator(
      resolveLocale([process.env.SCREENPOP_LANG, ...app.getPreferredSystemLanguages()]),
    ).current();
    dialog.showErrorBox(
      t.t('desktop.start-failed.title'),
      log
        ? t.t('desktop.start-failed.body', { error, log })
        : t.t('desktop.start-failed.body-no-log', { error }),
    );
  } catch (more) {
    process.stderr.write(`Screenpop could not say so in a window: ${String(more)}\n`);
  }
  app.exit(1);
}

/**
 * The app's start, in phases, in order. Each phase is a function below that takes what the
 * earlier ones built; none reads the environment or a file (launchEnvironment did, once). What an
 * adapter needs of something built later (the runtime, the quit sequence, Save diagnostics) it
 * reaches through `late`, the one place such links are kept.
 */
async function start(): Promise<void> {
  // Before any await: a second launch during start-up is answered, not lost (second-launch.ts).
  const secondLaunches = listenForSecondLaunches(app);
  const env = launchEnvironment(process.env, app, process.platform, process.execPath);
  const base = foundations(env);
  const late: Late = { runtime: null, quit: null, saveDiagnostics: null, pendingLinks: [] };
  const secured = secureShell(base, late);
  const views = adapters(base, secured, late, secondLaunches);
  const core = await buildCore(base, secured, views, late);
  late.runtime = core.runtime;
  // A link that started Screenpop (Windows, Linux: on its command line), and any that came while
  // it started.
  const firstLink = dialLinkInArgs(process.argv.slice(1));
  for (const link of [...(firstLink ? [firstLink] : []), ...late.pendingLinks.splice(0)])
    openCallLink(base, core.runtime, link);
  registerCallLinkSchemes(base);
  addDiagnostics(base, core);
  connectViews(base, views, core);
  const ends = endings(base, secured, views, core);
  late.quit = ends.quit;
  late.saveDiagnostics = ends.saveDiagnostics;
  await run(base, views, core, ends);
}

/** Links from adapters built early to what is built later (null until then). */
interface Late {
  runtime: AppRuntime | null;
  quit: QuitSequence | null;
  saveDiagnostics: (() => Promise<void>) | null;
  /** tel:/callto:/sip: links that arrived before the runtime existed. */
  pendingLinks: string[];
}

/** A call link: read, confirmed, dialled; a refusal said in a message box (dial-confirm.ts). */
function openCallLink({ language, logger }: Base, runtime: AppRuntime, link: string): void {
  void runtime.calls.openLink(link).then((r) => {
    if (!r.ok && r.refusal !== 'cancelled')
      void sayDialRefused({ dialog, language, logger }, r.words);
  });
}

/** "Call back" on a notification: CallActions.callBack on the History item; a refusal is said. */
function callBackFromNotification(
  { language, logger }: Base,
  runtime: AppRuntime,
  id: string,
): void {
  void runtime.calls.callBack('history', id).then((r) => {
    if (!r.ok) void sayDialRefused({ dialog, language, logger }, r.words);
  });
}

/**
 * Windows: electron-builder's NSIS and MSI register no URL schemes, so the packaged app offers
 * itself for tel:, callto: and sip: (per user), only where no program handles the scheme yet:
 * it never takes a scheme from the user's choice (Windows' Default apps lists it either way).
 */
function registerCallLinkSchemes({ env, logger }: Base): void {
  if (env.platform !== 'win32' || !env.packaged) return;
  for (const scheme of DIAL_LINK_SCHEMES) {
    try {
      if (app.getApplicationNameForProtocol(`${scheme}://`) === '')
        app.setAsDefaultProtocolClient(scheme);
    } catch (err) {
      logger.warn('call link scheme not registered', { scheme, error: err });
    }
  }
}

type Base = ReturnType<typeof foundations>;

/** Phase 1: the log, the secrets it scrubs, the language, the last resort and its guarded clock. */
function foundations(env: LaunchEnvironment) {
  const secrets = new SecretRegistry().hideHome(homedir());
  const logRing = new LogRing();
  const logger = createAppLogger(join(env.userData, 'logs'), secrets, !env.packaged, logRing);
  // "Save diagnostics…": modules add their sections (network decisions, ...) to this one registry.
  const diagnostics = new Diagnostics();
  // The language every window, the tray and notifications speak: the OS's until settings are read.
  // SCREENPOP_LANG (a language code, or en-XA, the pseudo-locale) overrides both, for developers.
  const { devLanguage } = env;
  const osLanguages = (): string[] => [
    ...(devLanguage ? [devLanguage] : []),
    ...app.getPreferredSystemLanguages(),
  ];
  const language = new LocaleState(resolveLocale(osLanguages()), logger);
  const applyLanguage = (settings: Settings): void =>
    language.set(
      devLanguage
        ? resolveLocale(osLanguages())
        : localeForSetting(settings.language, osLanguages()),
    );
  // The last resort: an unexpected error (a timer, a listener, an unhandled rejection) is logged
  // and the connection rebuilt (AppRuntime.recoverFromFault); it never ends the tray app.
  const lastResort = new LastResort({ logger, clock: systemClock, secrets });
  lastResort.installOn(process);
  const clock = lastResort.guardClock(systemClock);
  logger.info('starting', {
    version: app.getVersion(),
    packaged: env.packaged,
    platform: env.platform,
  });
  for (const added of switchesAdded) logger.info('chromium switch added', { ...added });
  return { env, secrets, logRing, logger, diagnostics, language, applyLanguage, lastResort, clock };
}

type Shell = ReturnType<typeof secureShell>;

/** Phase 2: the menu, and security before any window exists (protocol, CSP, permissions, links). */
function secureShell({ env, logger }: Base, late: Late) {
  // No default menu (Reload, Developer Tools, Electron's Help links); macOS keeps its edit keys.
  const menu = applicationMenuTemplate(env.platform);
  Menu.setApplicationMenu(menu ? Menu.buildFromTemplate(menu) : null);
  const origin = new AppOrigin(devServerOrigin(env.devUrl, env.packaged));
  const csp = contentSecurityPolicy(origin.devOrigin);
  registerAppProtocol(protocol, join(env.root, 'dist', 'renderer'), csp, logger);
  addCspHeader(session.defaultSession, origin, csp);
  denyAllPermissions(session.defaultSession, logger);
  const opener = new SafeExternalOpener(
    shell,
    () => late.runtime?.settings().crmAllowedSchemes ?? [],
    logger,
  );
  hardenAllWebContents(app, { origin, logger, openExternal: (url) => void opener.tryOpen(url) });
  const webPreferences = secureWebPreferences(
    join(env.root, 'dist', 'preload', 'preload.cjs'),
    !env.packaged,
  );
  // Windows sends no before-quit when the user logs off or the machine shuts down: each window
  // hears 'session-end' (the popup always exists, hidden). The clean part gets what time is left.
  // An installer closing the app (Restart Manager: 'close-app', an IT-pushed MSI upgrade) leaves a
  // restarter behind (installer-restart.ts).
  const restartAfterInstaller = installerRestarter({
    platform: env.platform,
    packaged: env.packaged,
    executable: env.execPath,
    systemRoot: env.systemRoot,
    spawn,
    logger,
  });
  app.on('browser-window-created', (_event, win) =>
    win.on('session-end', (event) => {
      restartAfterInstaller(event?.reasons ?? []);
      void late.quit?.run('session-end');
    }),
  );
  return { origin, opener, webPreferences, assets: join(env.root, 'assets') };
}

type Views = ReturnType<typeof adapters>;

/** Phase 3: the Electron adapters. What they find wrong on this computer is said in the status. */
function adapters(
  base: Base,
  { origin, webPreferences, assets }: Shell,
  late: Late,
  secondLaunches: SecondLaunches,
) {
  const { env, logger, language } = base;
  const health = new DesktopHealth(logger);
  const popup = new PopupWindow({
    createWindow: (options) => new BrowserWindow(options),
    screen,
    url: origin.pageUrl('popup'),
    webPreferences,
    placement: () =>
      late.runtime?.settings() ?? { popupDisplay: 'primary', popupCorner: 'bottom-right' },
    logger,
    health,
    onUserClose: () => late.runtime?.presenter.hidePopup(),
    dark: () => nativeTheme.shouldUseDarkColors,
  });
  const windows = new AppWindows({
    createWindow: (options) => new BrowserWindow(options),
    origin,
    webPreferences,
    logger,
    icon: join(assets, 'icon.png'),
  });
  // A second launch shows the settings, or with a tel:/callto:/sip: link (its command line, or
  // macOS' open-url) asks to call it (answered from now on; those during start-up were kept).
  secondLaunches.answerWith((argv) => {
    const link = dialLinkInArgs(argv);
    if (!link) windows.show('settings');
    else if (late.runtime) openCallLink(base, late.runtime, link);
    else late.pendingLinks.push(link);
  });
  // An ad-hoc signed macOS test build: macOS refuses its notifications and Squirrel.Mac its
  // updates; the status says so once, instead of every failure.
  if (env.unsignedMac) health.report('unsigned-build', UNSIGNED_MAC_WORDS);
  const notifier = new ElectronNotifier({
    create: (options) => new Notification(options),
    isSupported: () => Notification.isSupported(),
    ...(env.unsignedMac ? {} : { health }),
    onClick: () => late.runtime?.presenter.showPopup(),
    // A voicemail, SMS or missed call is in the History: it opens with that item selected.
    onNoticeClick: (id) => windows.showHistoryAt(id),
    // Call back on a missed-call or voicemail notification: the History's own Call back path.
    onCallBack: (id) => {
      if (late.runtime) callBackFromNotification(base, late.runtime, id);
    },
    logger,
    words: language,
    platform: env.platform,
  });
  watchToastActivation({
    platform: env.platform,
    handleActivation: (callback) => Notification.handleActivation(callback),
    holdsLiveNotifications: () => notifier.size > 0,
    openHistory: () => windows.show('history'),
    logger,
  });
  const trayIcon = (name: TrayIconName) =>
    nativeImage.createFromPath(join(assets, 'tray', trayIconFile(name, env.platform)));
  const tray = new TrayController({
    createTray: (image) => new Tray(image),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    icon: trayIcon,
    actions: {
      retryNow: () => void late.runtime?.retryNow(),
      toggleDoNotDisturb: () => {
        const rt = late.runtime;
        void rt?.setDoNotDisturb(!rt.settings().doNotDisturb);
      },
      togglePause: () => {
        const rt = late.runtime;
        void rt?.setPaused(!rt.isPaused());
      },
      openSettings: () => windows.show('settings'),
      openHistory: () => windows.show('history'),
      openDialBox: () => windows.show('dial'),
      saveDiagnostics: () => void late.saveDiagnostics?.(),
      quit: () => void (late.quit ? late.quit.run('user') : app.quit()),
    },
    words: language,
    platform: env.platform,
    dialOffered: () => late.runtime?.calls.offered().includes('dial') ?? false,
  });
  return { health, popup, windows, notifier, tray };
}

type Core = Awaited<ReturnType<typeof buildCore>>;

/**
 * Phase 4: the core. The organisation's policy first: its presets are the settings' defaults, its
 * locks win over the user's file. Then the stores, the keychain, the way out, organisation mode
 * and the runtime over all of them.
 */
async function buildCore(
  { env, logger, secrets, clock, language, applyLanguage }: Base,
  { opener }: Shell,
  { health, popup, notifier, tray }: Views,
  late: Late,
) {
  const policy = await loadMachinePolicy(logger, env.platform, env.policyFile);
  const settingsStore = new SettingsStore({
    path: join(env.userData, 'settings.json'),
    logger,
    defaults: presetDefaults(policy),
  });
  const history = new HistoryStore({
    path: join(env.userData, 'history.json'),
    clock,
    logger,
    limit: 500,
  });
  const credentials = new KeytarCredentialStore();
  // keytar is optional at install (a from-source install without libsecret): say now, in the
  // status and Settings, what a secret would meet, not only when one is saved or read.
  credentials.check().then(
    () => health.clear('keychain'),
    (err: unknown) => {
      logger.warn('the keychain cannot be used', { error: err });
      if (err instanceof KeychainUnavailableError) health.report('keychain', err.said);
    },
  );
  // The way out for every connection (core/net): the system's proxy as Chromium resolves it (PAC,
  // WPAD, the OS settings), or the settings' explicit one; the proxy's password from the keychain;
  // the system's CAs and the settings' CA file. The demo's simulator is on this computer: direct.
  const network = (s: Settings) =>
    transportFor(s.demoMode ? { ...s, proxyMode: 'none' } : s, {
      logger,
      secrets,
      readFile: readCaText,
      systemProxy: (url) => session.defaultSession.resolveProxy(url),
      proxyCredentials: (proxy) => credentials.getSecret(proxyAccount(proxy)),
      proxyPolicy: proxyPolicyOf(policy),
    });
  /** The current connection's transport: its proxy and certificate decisions go in diagnostics. */
  let connectionTransport: NetTransport | undefined;
  const connectionNetwork = (s: Settings) => (connectionTransport = network(s));
  const relayCursorStore = fileCursorStore(join(env.userData, 'relay-cursor.json'));
  // Calls to log into the CRM (issue 39): the durable queue in <userData>/call-log, writing to the
  // CRM of the settings in force through the same way out, with the lookup's token.
  const callLog = new CallLogQueue({
    folder: join(env.userData, 'call-log'),
    clock,
    logger,
    writer: settingsCallLogWriter(
      () => (late.runtime?.settings() ?? settingsStore.settings()).crmLookup,
      () => ({
        clock,
        secrets,
        fetch: network(late.runtime?.settings() ?? settingsStore.settings()).fetch,
        secret: (account) => credentials.getSecret(account),
      }),
    ),
  });
  void callLog
    .start()
    .catch((error: unknown) => logger.warn('the call-log queue could not be read', { error }));
  // Organisation mode: signed in through the system browser (the one link gate) to the relay.
  const organisation = new OrganisationAccount({
    store: credentials,
    clock,
    logger,
    secrets,
    network,
    openBrowser: (url) => opener.open(url),
    deviceLabel: `Screenpop on ${hostname()}`,
    browserPage: (outcome) => language.current().t(`status.org.browser-page-${outcome}`),
  });
  // This computer's id in organisation mode's call claims, kept in userData (made at the first
  // start; never a throw: an unusable file gives a new id, said in the log).
  const claimDevice = await new ClaimDeviceStore({
    path: join(env.userData, CLAIM_DEVICE_FILE),
    logger,
  }).load();
  // Start at login (login-item.ts); `executable` differs only when an update renames the AppImage.
  const startAtLogin = (enabled: boolean, executable = env.executable) =>
    applyStartAtLogin(enabled, {
      platform: env.platform,
      packaged: env.packaged,
      setLoginItemSettings: (settings) => app.setLoginItemSettings(settings),
      executable,
      autostartDir: env.autostartDir,
      logger,
    });
  const runtime: AppRuntime = new AppRuntime({
    clock,
    logger,
    secrets,
    settings: settingsPortFor(settingsStore, logger, policy),
    managed: managedView(policy),
    proxyAuthInUse: () => connectionTransport?.proxyAuthInUse(),
    ringActions: new RingActions({
      actions: policy.onRing,
      urlOpener: opener,
      runner: spawnProgramRunner(logger),
      logger,
      allowedSchemes: () => late.runtime?.settings().crmAllowedSchemes ?? [],
    }),
    credentials,
    history,
    health,
    views: {
      notifier,
      popup,
      urlOpener: opener,
      clipboard: { writeText: (text) => clipboard.writeText(text) },
      tray,
    },
    connect: withOrganisationMode(
      serviceConnectionFactory({
        clock,
        logger,
        secrets,
        relayCursorStore,
        transport: connectionNetwork,
      }),
      { clock, logger, account: organisation, transport: connectionNetwork, relayCursorStore },
    ),
    organisation,
    // A tel:/callto:/sip: link dials only after the user's Call in the system's message box.
    confirmDial: (shown) => confirmDial({ dialog, language, logger }, shown),
    // The CRM lookup goes out the same way as everything else (proxy, CAs).
    crmNetwork: network,
    callLog,
    callLogStatus: callLog,
    claimDevice,
    // The control surface lets the user (and the end-to-end suite) ring the demo from outside.
    startDemo: (phoneSystem) => startDemo({ clock, logger, control: true, phoneSystem }),
    // Through the settings in force (with the policy's locks), as the connection uses them.
    createProbe: (input) =>
      serviceProbe(input, {
        clock,
        logger,
        secrets,
        fetch: network(late.runtime?.settings() ?? settingsStore.settings()).fetch,
      }),
    onSettingsApplied: (s) => {
      applyLanguage(s);
      void startAtLogin(s.startAtLogin);
      // New credentials or another CRM: the call log tries again now.
      callLog.resume();
    },
    words: language,
  });
  return {
    runtime,
    policy,
    history,
    callLog,
    network,
    startAtLogin,
    transportDecisions: () => connectionTransport?.decisions() ?? null,
  };
}

/** Phase 5: "Save diagnostics…"'s sections. */
function addDiagnostics({ env, clock, diagnostics, logRing }: Base, core: Core): void {
  const rt = core.runtime;
  diagnostics.add(
    aboutSection({
      app: 'Screenpop',
      version: app.getVersion(),
      now: () => clock.now(),
      extra: { packaged: env.packaged },
    }),
  );
  diagnostics.add(
    settingsSection(
      () => rt.settings(),
      () => keychainState(rt.settingsView().hasSecret),
    ),
  );
  diagnostics.add(policySection(core.policy));
  diagnostics.add(connectionSection(() => rt.status(), rt.timeline));
  diagnostics.add(connectionTestSection(() => rt.lastConnectionTest()));
  diagnostics.add(logSection(() => logRing.snapshot()));
  diagnostics.add({
    // Lookup counts, latency and kinds of failure: never a number, a name or the token.
    name: 'crm',
    collect: () => rt.crmStats() ?? { note: 'no CRM lookup set up' },
  });
  diagnostics.add({
    // The call-log queue: counts, ages, kinds of failure; never a number, a note or a call id.
    name: 'call-log',
    collect: () => core.callLog.diagnostics(),
  });
  diagnostics.add({
    name: 'network',
    collect: () => core.transportDecisions() ?? { note: 'no connection made yet' },
  });
}

/** Phase 6: the core's changes to the windows and the popup; faults to the runtime. */
function connectViews({ lastResort, language }: Base, { windows, popup }: Views, core: Core): void {
  const rt = core.runtime;
  lastResort.onFault((fault) => rt.recoverFromFault(fault));
  rt.onStatus((status) => {
    windows.broadcast('status:changed', status);
    popup.sendStatus(status);
  });
  rt.onSettings((view) => windows.broadcast('settings:changed', view));
  rt.consultations.onChange((list) => popup.sendConsultations(list));
  language.onChange(() => {
    const view = { locale: language.locale };
    windows.broadcast('i18n:changed', view);
    popup.sendLocale(view);
    rt.languageChanged();
  });
  core.history.onChange((entries) => windows.broadcast('history:changed', entries));
}

type Ends = ReturnType<typeof endings>;

/**
 * Phase 7: IPC, updates, power events, the app's own events, and the one quit sequence with a
 * time limit, whoever asks (core/app/quit-sequence.ts).
 */
function endings(base: Base, { origin }: Shell, views: Views, core: Core) {
  const { env, clock, logger, language, diagnostics, secrets } = base;
  const { popup, windows, tray } = views;
  const rt = core.runtime;
  const ipc = new TypedIpcMain(
    ipcMain,
    {
      isOurWebContents: (contents) => popup.owns(contents) || windows.owns(contents),
      pageOf: (url) => origin.pageOf(url),
    },
    logger,
  );
  const dialogs = new NativeDialogs({
    dialog,
    windowOf: (contents) => BrowserWindow.fromWebContents(contents),
    documentsFolder: () => app.getPath('documents'),
    logger,
  });
  registerIpcHandlers(ipc, { runtime: rt, popup, windows, dialogs, clock, logger, language });

  // Ending: one sequence, with a time limit, whoever asks (core/app/quit-sequence.ts). Its clean
  // part runs once: an update runs it before installing, and the quit that follows finds it done.
  let cleaned: Promise<void> | null = null;
  const cleanUp = (): Promise<void> =>
    (cleaned ??= (async () => {
      popup.quitting();
      stopPower();
      updates.stop();
      await rt.shutdown();
    })());

  // Updates: decided in the core, carried out by electron-updater (updates.ts).
  let updateNet: { settings: Settings; transport: NetTransport } | null = null;
  const updateTransport = (): NetTransport => {
    const settings = rt.settings();
    if (updateNet?.settings !== settings)
      updateNet = { settings, transport: core.network({ ...settings, demoMode: false }) };
    return updateNet.transport;
  };
  const updates = appUpdates({
    clock,
    logger,
    presenter: rt.presenter,
    popup,
    userData: env.userData,
    unsignedMac: env.unsignedMac,
    // The feed and downloads go out as everything else does (proxy, its credentials, the CA file);
    // the demo's direct route is for its simulator only.
    agentFor: (url) => updateTransport().agentFor(url),
    // The clean part first, then the lock let go: the new version must find both (update-install.ts).
    install: {
      cleanUp: () => cleanUp(),
      pointAutostartAt: async (executable) => {
        if (rt.settings().startAtLogin) await core.startAtLogin(true, executable);
      },
      releaseLock: () => app.releaseSingleInstanceLock(),
      // The process's own environment and arguments: the version started again gets them.
      restart: () =>
        startAgainAndExit(
          { env: process.env, argv: process.argv, execPath: process.execPath },
          { spawn, relaunch: () => app.relaunch(), exit: (code) => app.exit(code) },
          (error) => logger.error('could not start again', { error }),
        ),
    },
  });
  rt.onSettings((view) => updates.apply(view.settings.updates));

  const stopPower = watchPower({
    powerMonitor,
    isOnline: () => net.isOnline(),
    clock,
    wake: (reason) => rt.wake(reason),
  });

  // A tray app: closing every window does not quit; a second launch shows the settings.
  app.on('window-all-closed', () => {});
  app.on('activate', () => windows.show('settings'));
  if (env.platform === 'darwin') app.dock?.hide();

  const quit = new QuitSequence({
    clock,
    logger,
    shutdown: cleanUp,
    finish: (code) => {
      ipc.removeAll();
      tray.destroy();
      popup.destroy();
      windows.closeAll();
      app.exit(code);
    },
  });
  // The OS quits the app (macOS logout or restart, an update's installer): always held for the
  // clean part, which has its own time limit, then app.exit(). A second request shortens it.
  app.on('before-quit', (event) => {
    event.preventDefault();
    void quit.run('os-quit');
  });
  // Linux (logind) and macOS shutdown: preventing it holds the shutdown only until the app exits.
  powerMonitor.on('shutdown', (event?: { preventDefault(): void }) => {
    event?.preventDefault();
    void quit.run('shutdown');
  });

  const saveDiagnostics = diagnosticsAction({
    chooseDiagnosticsPath: (name) => dialogs.chooseDiagnosticsPath(name),
    diagnostics,
    secrets,
    clock,
    logger,
    language,
    showItemInFolder: (path) => shell.showItemInFolder(path),
    showErrorBox: (title, body) => dialog.showErrorBox(title, body),
  });
  return { quit, updates, saveDiagnostics };
}

/**
 * Phase 8: run. Linux's desktop checks (the sandbox off, a native Wayland window, no tray on
 * GNOME: said in the status; without a tray the Settings window is the only way in, so it opens),
 * then the core starts; onboarding opens Settings.
 */
async function run(
  { env, logger, clock, language }: Base,
  { health, windows, notifier }: Views,
  core: Core,
  ends: Ends,
) {
  void checkDesktop(
    { platform: env.platform, env: process.env, commandLine: app.commandLine },
    health,
    logger,
  ).then(({ trayHidden }) => {
    if (trayHidden) windows.show('settings');
  });

  const rt = core.runtime;
  const { needsOnboarding } = await rt.start();
  ends.updates.apply(rt.settings().updates);
  if (needsOnboarding) windows.show('settings');
  // macOS: the notification permission asked once (provisioned installs too), not at a call; and
  // an app run from its disk image offers to move to /Applications (mac-first-start.ts).
  void welcomeOnce({
    platform: env.platform,
    unsignedMac: env.unsignedMac,
    markFile: join(env.userData, 'first-start.json'),
    notifier,
    logger,
    now: () => clock.now(),
  });
  void checkApplicationsFolder({
    platform: env.platform,
    packaged: env.packaged,
    isInApplicationsFolder: () => app.isInApplicationsFolder(),
    moveToApplicationsFolder: () => app.moveToApplicationsFolder(),
    askToMove: askWithMessageBox(dialog),
    words: language,
    health,
    logger,
  });
  logger.info('ready', { needsOnboarding });
}
