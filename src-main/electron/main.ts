/**
 * The composition root: the only place that knows every concrete class. It builds the core
 * (settings, keychain, service client, token manager, engine, directory, history, presenter; see
 * src-main/core/app/runtime.ts), the Electron adapters (tray, notifications, popup, windows,
 * openExternal, clipboard, power events) and the IPC handlers, and applies the security settings
 * before any window exists. Bundled by scripts/build-main.ts to dist/main/main.cjs.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
import { serviceConnectionFactory } from '../core/app/connection.ts';
import { DesktopHealth } from '../core/app/desktop-health.ts';
import { HistoryStore } from '../core/app/history-store.ts';
import { QuitSequence } from '../core/app/quit-sequence.ts';
import { AppRuntime } from '../core/app/runtime.ts';
import { settingsPortFor } from '../core/app/settings-port.ts';
import { spawnProgramRunner } from '../core/app/program-runner.ts';
import { RingActions } from '../core/app/ring-actions.ts';
import { OrganisationAccount } from '../core/org/org-account.ts';
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
import { serviceProbe } from '../core/app/service-probe.ts';
import { systemClock } from '../../src-shared/clock.ts';
import { LastResort } from '../../src-shared/last-resort.ts';
import { fixedTranslator, LocaleState } from '../../src-shared/i18n/locale-state.ts';
import {
  environmentLanguages,
  localeForSetting,
  resolveLocale,
} from '../../src-shared/i18n/locales.ts';
import {
  KeychainUnavailableError,
  KeytarCredentialStore,
} from '../core/credentials/keytar-store.ts';
import { SecretRegistry } from '../../src-shared/log.ts';
import { provisionSecret } from './store-secret.ts';
import { fileCursorStore } from '../core/relay-client/cursor-store.ts';
import { SettingsStore } from '../core/settings/settings-store.ts';
import type { Settings } from '../core/settings/types.ts';
import { proxyAccount, transportFor } from '../core/net/network.ts';
import { readCaText } from '../../src-shared/net/trust.ts';
import type { NetTransport } from '../../src-shared/net/transport.ts';
import { startDemo } from '../../src-sim/demo.ts';
import { APP_SCHEME, AppOrigin, devServerOrigin } from './app-origin.ts';
import { contentSecurityPolicy } from '../../src-shared/content-security-policy.ts';
import { applicationMenuTemplate } from './app-menu.ts';
import { askWithMessageBox, checkApplicationsFolder, welcomeOnce } from './mac-first-start.ts';
import { registerAppProtocol } from './app-protocol.ts';
import { checkDesktop, storeSecretNeedsDisplay } from './desktop-checks.ts';
import { applyChromiumSwitches, devShmBytes } from './chromium-switches.ts';
import { NativeDialogs } from './dialogs.ts';
import { diagnosticsAction } from './diagnostics-action.ts';
import { SafeExternalOpener } from './external.ts';
import { installerRestarter } from './installer-restart.ts';
import { registerIpcHandlers } from './ipc-handlers.ts';
import { listenForSecondLaunches } from './second-launch.ts';
import { TypedIpcMain } from './ipc-main.ts';
import { createAppLogger } from './logging.ts';
import { applyStartAtLogin } from './login-item.ts';
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
import { AppWindows } from './windows.ts';
import { applyAppIdentity, watchToastActivation } from './windows-toasts.ts';

// Must happen before 'ready': app:// is a standard, secure origin ('self' in the CSP works, fetch works).
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);

// Chromium switches the machine needs (a small /dev/shm in a container); before 'ready'.
const switchesAdded = applyChromiumSwitches(app.commandLine, {
  platform: process.platform,
  devShmBytes: devShmBytes(process.platform),
});

if (process.argv.includes('--store-secret')) {
  // An administrator's script: `Screenpop --store-secret` with the secret on standard input.
  const t = fixedTranslator(resolveLocale(environmentLanguages(process.env))).current();
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
    { spawn, exit: (code) => app.exit(code), stderr: (line) => process.stderr.write(line) },
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

async function start(): Promise<void> {
  // Before any await: a second launch during start-up is answered, not lost (second-launch.ts).
  const secondLaunches = listenForSecondLaunches(app);
  const root = app.getAppPath();
  const userData = app.getPath('userData');
  const secrets = new SecretRegistry().hideHome(homedir());
  const logRing = new LogRing();
  const logger = createAppLogger(join(userData, 'logs'), secrets, !app.isPackaged, logRing);
  // "Save diagnostics…": modules add their sections (network decisions, ...) to this one registry.
  const diagnostics = new Diagnostics();
  // The language every window, the tray and notifications speak: the OS's until settings are read.
  // SCREENPOP_LANG (a language code, or en-XA, the pseudo-locale) overrides both, for developers.
  const devLanguage = process.env.SCREENPOP_LANG;
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
    packaged: app.isPackaged,
    platform: process.platform,
  });
  for (const added of switchesAdded) logger.info('chromium switch added', { ...added });

  // No default menu (Reload, Developer Tools, Electron's Help links); macOS keeps its edit keys.
  const menu = applicationMenuTemplate(process.platform);
  Menu.setApplicationMenu(menu ? Menu.buildFromTemplate(menu) : null);

  // Security before any window exists.
  const origin = new AppOrigin(devServerOrigin(process.env.SCREENPOP_DEV_URL, app.isPackaged));
  const csp = contentSecurityPolicy(origin.devOrigin);
  registerAppProtocol(protocol, join(root, 'dist', 'renderer'), csp, logger);
  addCspHeader(session.defaultSession, origin, csp);
  denyAllPermissions(session.defaultSession, logger);
  let runtime: AppRuntime | null = null;
  const opener = new SafeExternalOpener(
    shell,
    () => runtime?.settings().crmAllowedSchemes ?? [],
    logger,
  );
  hardenAllWebContents(app, { origin, logger, openExternal: (url) => void opener.tryOpen(url) });
  const webPreferences = secureWebPreferences(
    join(root, 'dist', 'preload', 'preload.cjs'),
    !app.isPackaged,
  );
  const assets = join(root, 'assets');
  let quit: QuitSequence | null = null;
  // Windows sends no before-quit when the user logs off or the machine shuts down: each window
  // hears 'session-end' (the popup always exists, hidden). The clean part gets what time is left.
  // An installer closing the app (Restart Manager: 'close-app', an IT-pushed MSI upgrade) leaves a
  // restarter behind (installer-restart.ts).
  const restartAfterInstaller = installerRestarter({
    platform: process.platform,
    packaged: app.isPackaged,
    executable: process.execPath,
    systemRoot: process.env.SystemRoot,
    spawn,
    logger,
  });
  app.on('browser-window-created', (_event, win) =>
    win.on('session-end', (event) => {
      restartAfterInstaller(event?.reasons ?? []);
      void quit?.run('session-end');
    }),
  );

  // Adapters. What they find wrong on this computer is said in the status (tray, Settings).
  const health = new DesktopHealth(logger);
  const popup = new PopupWindow({
    createWindow: (options) => new BrowserWindow(options),
    screen,
    url: origin.pageUrl('popup'),
    webPreferences,
    placement: () =>
      runtime?.settings() ?? { popupDisplay: 'primary', popupCorner: 'bottom-right' },
    logger,
    health,
    onUserClose: () => runtime?.presenter.hidePopup(),
    dark: () => nativeTheme.shouldUseDarkColors,
  });
  const windows = new AppWindows({
    createWindow: (options) => new BrowserWindow(options),
    origin,
    webPreferences,
    logger,
    icon: join(assets, 'icon.png'),
  });
  secondLaunches.answerWith(() => windows.show('settings'));
  // An ad-hoc signed macOS test build (scripts/dist.ts without CSC_LINK): macOS refuses its
  // notifications and Squirrel.Mac its updates; the status says so once, instead of every failure.
  const unsignedMac = process.platform === 'darwin' && app.isPackaged && builtUnsigned(root);
  if (unsignedMac) health.report('unsigned-build', UNSIGNED_MAC_WORDS);
  const notifier = new ElectronNotifier({
    create: (options) => new Notification(options),
    isSupported: () => Notification.isSupported(),
    ...(unsignedMac ? {} : { health }),
    onClick: () => runtime?.presenter.showPopup(),
    // A voicemail or SMS is in the History.
    onNoticeClick: () => windows.show('history'),
    logger,
    words: language,
    platform: process.platform,
  });
  watchToastActivation({
    platform: process.platform,
    handleActivation: (callback) => Notification.handleActivation(callback),
    holdsLiveNotifications: () => notifier.size > 0,
    openHistory: () => windows.show('history'),
    logger,
  });
  const trayIcon = (name: TrayIconName) =>
    nativeImage.createFromPath(join(assets, 'tray', trayIconFile(name, process.platform)));
  const tray = new TrayController({
    createTray: (image) => new Tray(image),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    icon: trayIcon,
    actions: {
      retryNow: () => void runtime?.retryNow(),
      toggleDoNotDisturb: () => void runtime?.setDoNotDisturb(!runtime.settings().doNotDisturb),
      togglePause: () => void runtime?.setPaused(!runtime.isPaused()),
      openSettings: () => windows.show('settings'),
      openHistory: () => windows.show('history'),
      saveDiagnostics: () => void saveDiagnostics(),
      quit: () => void (quit ? quit.run('user') : app.quit()),
    },
    words: language,
    platform: process.platform,
  });

  // The core. The organisation's policy first: its presets are the settings' defaults, its locks
  // win over the user's file. SCREENPOP_POLICY_FILE points elsewhere only in unpackaged runs (tests).
  const policy = await loadMachinePolicy(
    logger,
    process.platform,
    (!app.isPackaged && process.env.SCREENPOP_POLICY_FILE) || null,
  );
  const settingsStore = new SettingsStore({
    path: join(userData, 'settings.json'),
    logger,
    defaults: presetDefaults(policy),
  });
  const history = new HistoryStore({
    path: join(userData, 'history.json'),
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
  const relayCursorStore = fileCursorStore(join(userData, 'relay-cursor.json'));
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
  // Start at login (login-item.ts); `executable` differs only when an update renames the AppImage.
  const startAtLogin = (enabled: boolean, executable = process.env.APPIMAGE || process.execPath) =>
    applyStartAtLogin(enabled, {
      platform: process.platform,
      packaged: app.isPackaged,
      setLoginItemSettings: (settings) => app.setLoginItemSettings(settings),
      executable,
      autostartDir: join(
        process.env.XDG_CONFIG_HOME || join(app.getPath('home'), '.config'),
        'autostart',
      ),
      logger,
    });
  runtime = new AppRuntime({
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
      allowedSchemes: () => runtime?.settings().crmAllowedSchemes ?? [],
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
    // The CRM lookup goes out the same way as everything else (proxy, CAs).
    crmNetwork: network,
    // The control surface lets the user (and the end-to-end suite) ring the demo from outside.
    startDemo: (phoneSystem) => startDemo({ clock, logger, control: true, phoneSystem }),
    // Through the settings in force (with the policy's locks), as the connection uses them.
    createProbe: (input) =>
      serviceProbe(input, {
        clock,
        logger,
        secrets,
        fetch: network(runtime?.settings() ?? settingsStore.settings()).fetch,
      }),
    onSettingsApplied: (s) => {
      applyLanguage(s);
      void startAtLogin(s.startAtLogin);
    },
    words: language,
  });
  const rt = runtime;
  diagnostics.add(
    aboutSection({
      app: 'Screenpop',
      version: app.getVersion(),
      now: () => clock.now(),
      extra: { packaged: app.isPackaged },
    }),
  );
  diagnostics.add(
    settingsSection(
      () => rt.settings(),
      () => keychainState(rt.settingsView().hasSecret),
    ),
  );
  diagnostics.add(policySection(policy));
  diagnostics.add(connectionSection(() => rt.status(), rt.timeline));
  diagnostics.add(connectionTestSection(() => rt.lastConnectionTest()));
  diagnostics.add(logSection(() => logRing.snapshot()));
  diagnostics.add({
    // Lookup counts, latency and kinds of failure: never a number, a name or the token.
    name: 'crm',
    collect: () => rt.crmStats() ?? { note: 'no CRM lookup set up' },
  });
  diagnostics.add({
    name: 'network',
    collect: () => connectionTransport?.decisions() ?? { note: 'no connection made yet' },
  });
  lastResort.onFault((fault) => rt.recoverFromFault(fault));
  rt.onStatus((status) => {
    windows.broadcast('status:changed', status);
    popup.sendStatus(status);
  });
  rt.onSettings((view) => windows.broadcast('settings:changed', view));
  language.onChange(() => {
    const view = { locale: language.locale };
    windows.broadcast('i18n:changed', view);
    popup.sendLocale(view);
    rt.languageChanged();
  });
  history.onChange((entries) => windows.broadcast('history:changed', entries));

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

  // Updates: decided in the core, carried out by electron-updater (updates.ts).
  let updateNet: { settings: Settings; transport: NetTransport } | null = null;
  const updateTransport = (): NetTransport => {
    const settings = rt.settings();
    if (updateNet?.settings !== settings)
      updateNet = { settings, transport: network({ ...settings, demoMode: false }) };
    return updateNet.transport;
  };
  const updates = appUpdates({
    clock,
    logger,
    presenter: rt.presenter,
    popup,
    userData,
    unsignedMac,
    // The feed and downloads go out as everything else does (proxy, its credentials, the CA file);
    // the demo's direct route is for its simulator only.
    agentFor: (url) => updateTransport().agentFor(url),
    // The clean part first, then the lock let go: the new version must find both (update-install.ts).
    install: {
      cleanUp: () => cleanUp(),
      pointAutostartAt: async (executable) => {
        if (rt.settings().startAtLogin) await startAtLogin(true, executable);
      },
      releaseLock: () => app.releaseSingleInstanceLock(),
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
  if (process.platform === 'darwin') app.dock?.hide();

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
  quit = new QuitSequence({
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
  const q = quit;
  // The OS quits the app (macOS logout or restart, an update's installer): always held for the
  // clean part, which has its own time limit, then app.exit(). A second request shortens it.
  app.on('before-quit', (event) => {
    event.preventDefault();
    void q.run('os-quit');
  });
  // Linux (logind) and macOS shutdown: preventing it holds the shutdown only until the app exits.
  powerMonitor.on('shutdown', (event?: { preventDefault(): void }) => {
    event?.preventDefault();
    void q.run('shutdown');
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

  // Linux: the sandbox off, a native Wayland window, no tray on GNOME: said in the status; without
  // a tray the Settings window is the only way to the app, so it opens.
  void checkDesktop(
    { platform: process.platform, env: process.env, commandLine: app.commandLine },
    health,
    logger,
  ).then(({ trayHidden }) => {
    if (trayHidden) windows.show('settings');
  });

  const { needsOnboarding } = await rt.start();
  updates.apply(rt.settings().updates);
  if (needsOnboarding) windows.show('settings');
  // macOS: the notification permission asked once (provisioned installs too), not at a call; and
  // an app run from its disk image offers to move to /Applications (mac-first-start.ts).
  void welcomeOnce({
    platform: process.platform,
    unsignedMac,
    markFile: join(userData, 'first-start.json'),
    notifier,
    logger,
    now: () => clock.now(),
  });
  void checkApplicationsFolder({
    platform: process.platform,
    packaged: app.isPackaged,
    isInApplicationsFolder: () => app.isInApplicationsFolder(),
    moveToApplicationsFolder: () => app.moveToApplicationsFolder(),
    askToMove: askWithMessageBox(dialog),
    words: language,
    health,
    logger,
  });
  logger.info('ready', { needsOnboarding });
}

/** The mark scripts/dist.ts puts in the packaged package.json of an ad-hoc signed macOS build. */
function builtUnsigned(appPath: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(appPath, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    return pkg.screenpopUnsigned === true || pkg.screenpopUnsigned === 'true';
  } catch {
    return false;
  }
}
