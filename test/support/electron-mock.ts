/**
 * One shared fake of the `electron` module for tests (the electron/fiddle pattern), used as
 *   vi.mock('electron', () => import('./electron-mock.ts'));
 * Each fake keeps what was done to it (windows' bounds and visibility, sent IPC messages, tray
 * state, notifications, registered handlers) so tests assert on behaviour, and lets tests play the
 * OS's part (emit 'click', invoke an IPC channel from a given frame, move the pointer).
 * resetElectronMock() clears everything between tests.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { vi } from 'vitest';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

let nextId = 1;

/**
 * What Electron throws when a method of a destroyed BrowserWindow or WebContents is called (the
 * native object is gone): `TypeError: Object has been destroyed`.
 */
function destroyedError(): TypeError {
  return new TypeError('Object has been destroyed');
}

/** An Electron Event: preventDefault() and defaultPrevented, as listeners see it. */
export function fakeEvent(): { preventDefault(): void; defaultPrevented: boolean } {
  return {
    defaultPrevented: false,
    preventDefault() {
      this.defaultPrevented = true;
    },
  };
}

export class FakeWebContents extends EventEmitter {
  readonly id = nextId++;
  url = '';
  sent: Array<{ channel: string; args: unknown[] }> = [];
  windowOpenHandler: ((details: { url: string }) => { action: 'allow' | 'deny' }) | null = null;
  destroyed = false;
  /** pkg-b: the page has loaded ('did-finish-load'); until then send() is dropped. */
  loaded = false;
  /** pkg-b: what was sent before the page loaded (Electron loses it; tests may look). */
  dropped: Array<{ channel: string; args: unknown[] }> = [];
  private alive(): void {
    if (this.destroyed) throw destroyedError();
  }
  isLoading(): boolean {
    this.alive();
    return !this.loaded;
  }
  send(channel: string, ...args: unknown[]): void {
    this.alive();
    // pkg-b: before its page has loaded nothing in the page listens; the message is lost.
    if (!this.loaded) {
      this.dropped.push({ channel, args });
      return;
    }
    this.sent.push({ channel, args });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'allow' | 'deny' }): void {
    this.alive();
    this.windowOpenHandler = handler;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  getURL(): string {
    this.alive();
    return this.url;
  }
  /** Plays a navigation attempt; returns whether the app prevented it. */
  attemptNavigation(event: 'will-navigate' | 'will-redirect', url: string): boolean {
    let prevented = false;
    this.emit(event, { preventDefault: () => (prevented = true) }, url);
    return prevented;
  }
  lastSent(channel: string): unknown[] | undefined {
    return this.sent.filter((s) => s.channel === channel).at(-1)?.args;
  }
}

/**
 * A BrowserWindow as Electron runs one:
 * - `show` defaults to true (Electron's default); a hidden window gets 'ready-to-show' once its
 *   page has loaded (on a later tick, as the first paint comes after the load), never a shown one;
 * - close() is what the user's close button, Alt+F4 or Cmd+W does: 'close' is emitted, and unless
 *   a listener prevents it the window is destroyed ('closed');
 * - destroy() skips 'close' and always emits 'closed';
 * - every method of a destroyed window (and of its web contents, and the `webContents` property
 *   itself) throws "Object has been destroyed", except isDestroyed().
 * Tests read what was done through the plain fields (visible, calls, bounds, contents, ...), which
 * stay readable after destruction.
 */
export class BrowserWindow extends EventEmitter {
  static instances: BrowserWindow[] = [];
  /** Tests set it to make the next windows' loadURL fail (as a missing page does). */
  static failLoads = false;
  readonly options: Record<string, unknown>;
  /** The web contents, readable by tests after destruction (Electron's `webContents` throws then). */
  readonly contents = new FakeWebContents();
  bounds: Rect;
  visible: boolean;
  focused = false;
  destroyed = false;
  minimized = false;
  calls: string[] = [];
  alwaysOnTop: { flag: boolean; level?: string } = { flag: false };
  loadedUrl: string | null = null;
  /** Tests set it to make the window's next calls throw as a broken native window would. */
  broken: Error | null = null;

  constructor(options: Record<string, unknown> = {}) {
    super();
    this.options = options;
    this.bounds = {
      x: 0,
      y: 0,
      width: Number(options.width ?? 800),
      height: Number(options.height ?? 600),
    };
    this.visible = options.show !== false;
    this.alwaysOnTop = { flag: options.alwaysOnTop === true };
    BrowserWindow.instances.push(this);
    app.emit('browser-window-created', fakeEvent(), this);
  }
  private alive(): void {
    if (this.destroyed) throw destroyedError();
    if (this.broken) throw this.broken;
  }
  get webContents(): FakeWebContents {
    if (this.destroyed) throw destroyedError();
    return this.contents;
  }
  static getAllWindows(): BrowserWindow[] {
    return BrowserWindow.instances.filter((w) => !w.destroyed);
  }
  static fromWebContents(contents: unknown): BrowserWindow | null {
    return BrowserWindow.instances.find((w) => !w.destroyed && w.contents === contents) ?? null;
  }
  loadURL(url: string): Promise<void> {
    this.alive();
    this.loadedUrl = url;
    this.contents.url = url;
    if (BrowserWindow.failLoads)
      return Promise.reject(new Error(`ERR_FILE_NOT_FOUND (-6) loading '${url}'`));
    // The page loads on a later tick ('did-finish-load'; pkg-b), then the first paint of a hidden
    // window: 'ready-to-show'.
    this.contents.loaded = false;
    setImmediate(() => {
      if (this.destroyed) return;
      finishLoad(this);
      if (!this.visible && this.options.paintWhenInitiallyHidden !== false)
        this.emit('ready-to-show');
    });
    return Promise.resolve();
  }
  show(): void {
    this.alive();
    this.calls.push('show');
    this.visible = true;
    this.focused = true;
  }
  showInactive(): void {
    this.alive();
    this.calls.push('showInactive');
    this.visible = true;
  }
  hide(): void {
    this.alive();
    this.calls.push('hide');
    this.visible = false;
    this.focused = false;
  }
  focus(): void {
    this.alive();
    this.calls.push('focus');
    this.focused = true;
  }
  isVisible(): boolean {
    this.alive();
    return this.visible;
  }
  isFocused(): boolean {
    this.alive();
    return this.focused;
  }
  isMinimized(): boolean {
    this.alive();
    return this.minimized;
  }
  restore(): void {
    this.alive();
    this.minimized = false;
  }
  setBounds(bounds: Rect): void {
    this.alive();
    this.bounds = { ...bounds };
  }
  getBounds(): Rect {
    this.alive();
    return { ...this.bounds };
  }
  setAlwaysOnTop(flag: boolean, level?: string): void {
    this.alive();
    this.alwaysOnTop = { flag, ...(level ? { level } : {}) };
  }
  setVisibleOnAllWorkspaces(): void {
    this.alive();
  }
  setSkipTaskbar(skip: boolean): void {
    this.alive();
    this.calls.push(`setSkipTaskbar(${skip})`);
  }
  removeMenu(): void {
    this.alive();
    this.calls.push('removeMenu');
  }
  /**
   * The user's close button / Alt+F4 / Cmd+W, or win.close(): 'close' first, which a listener may
   * prevent; otherwise the window is destroyed. Returns whether it was destroyed.
   */
  close(): boolean {
    this.alive();
    this.calls.push('close');
    const event = fakeEvent();
    this.emit('close', event);
    if (event.defaultPrevented) return false;
    this.destroy();
    return true;
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.contents.destroyed = true;
    this.contents.emit('destroyed');
    this.emit('closed');
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

/** As Electron's: a path with no image file gives an empty image (a tray would show nothing). */
export const nativeImage = {
  createFromPath: (path: string) => ({ path, isEmpty: () => !existsSync(path) }),
};

/** A tray icon; after destroy() every method throws "Tray is destroyed", as Electron's does. */
export class Tray extends EventEmitter {
  static instances: Tray[] = [];
  image: unknown;
  pressedImage: unknown = null;
  tooltip = '';
  title = '';
  menu: { template: MenuItem[] } | null = null;
  destroyed = false;
  /** Menus popped up by the app (a left click on Windows). */
  poppedUp: Array<{ template: MenuItem[] } | undefined> = [];
  constructor(image: unknown) {
    super();
    this.image = image;
    Tray.instances.push(this);
  }
  private alive(): void {
    if (this.destroyed) throw new Error('Tray is destroyed');
  }
  setImage(image: unknown): void {
    this.alive();
    this.image = image;
  }
  setPressedImage(image: unknown): void {
    this.alive();
    this.pressedImage = image;
  }
  setToolTip(text: string): void {
    this.alive();
    this.tooltip = text;
  }
  setTitle(text: string): void {
    this.alive();
    this.title = text;
  }
  setContextMenu(menu: { template: MenuItem[] }): void {
    this.alive();
    this.menu = menu;
  }
  popUpContextMenu(menu?: { template: MenuItem[] }): void {
    this.alive();
    this.poppedUp.push(menu ?? this.menu ?? undefined);
  }
  destroy(): void {
    this.destroyed = true;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  /** The menu item with this id (tests click it). */
  item(id: string): MenuItem | undefined {
    return this.menu?.template.find((i) => i.id === id);
  }
}

export interface MenuItem {
  id?: string;
  label?: string;
  type?: string;
  checked?: boolean;
  enabled?: boolean;
  submenu?: MenuItem[];
  click?: () => void;
}

export const Menu = {
  buildFromTemplate: (template: MenuItem[]) => ({ template }),
  /** The application menu: 'default' (Electron's own) until the app sets one, or null for none. */
  application: 'default' as { template: MenuItem[] } | null | 'default',
  setApplicationMenu(menu: { template: MenuItem[] } | null): void {
    this.application = menu;
  },
};

export class Notification extends EventEmitter {
  static instances: Notification[] = [];
  static supported = true;
  readonly options: Record<string, unknown>;
  shown = false;
  closed = false;
  constructor(options: Record<string, unknown>) {
    super();
    this.options = options;
    Notification.instances.push(this);
  }
  /**
   * Set it to play the OS refusing notifications: show() then emits 'failed' with this error (as
   * macOS does when permission is denied or the app is unsigned), instead of 'show'.
   */
  static refusal: string | null = null;
  static isSupported(): boolean {
    // pkg-b: Electron 42+ writes its Start Menu shortcut at the first call, with the app's name,
    // AppUserModelID and Toast Activator CLSID in force then.
    toastActivation.shortcut ??= {
      name: appPlace.name,
      appUserModelId: app.appUserModelId,
      clsid: appPlace.toastActivatorCLSID,
    };
    return Notification.supported;
  }
  /** pkg-b: Windows' one handler for every toast activation (Electron 45). */
  static handleActivation(callback: (details: { type: string; arguments: string }) => void): void {
    toastActivation.handler = callback;
  }
  /** As Electron: 'show' (or 'failed') comes on a later tick, when the OS has answered. */
  show(): void {
    this.shown = true;
    const refusal = Notification.refusal;
    setImmediate(() => {
      if (refusal === null) this.emit('show', fakeEvent());
      else this.emit('failed', fakeEvent(), refusal);
    });
  }
  close(): void {
    this.closed = true;
    this.emit('close', {});
  }
  /** The user clicks it. */
  click(): void {
    this.emit('click', {});
  }
  /**
   * The OS the notification shows on: Electron shows `actions` (buttons) on macOS and Windows
   * only; on Linux (libnotify) a notification has no buttons, whatever its options say.
   */
  static platform: NodeJS.Platform = 'win32';
  /**
   * The user presses the notification's button `index`. As Electron 45 reports it: 'action' with
   * an event carrying `actionIndex` (and `selectionIndex`, -1), then the deprecated index
   * arguments. A button the user cannot see cannot be pressed: this throws where the notification
   * was given no such action, or on Linux.
   */
  pressAction(index: number): void {
    const actions = this.options['actions'];
    if (Notification.platform === 'linux')
      throw new Error('Linux notifications show no action buttons');
    if (!Array.isArray(actions) || !actions[index])
      throw new Error(`the notification has no action ${index}`);
    this.emit('action', { ...fakeEvent(), actionIndex: index, selectionIndex: -1 }, index, -1);
  }
}

type InvokeHandler = (event: unknown, ...args: unknown[]) => unknown;

export interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
}

export const ipcMain = {
  handlers: new Map<string, InvokeHandler>(),
  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel))
      throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
  on: vi.fn(),
  /** Plays ipcRenderer.invoke from `sender`, top frame at `frameUrl` (or the given frame). */
  async invoke(
    channel: string,
    from: { sender: FakeWebContents; frame?: FakeFrame | null; frameUrl?: string },
    ...args: unknown[]
  ): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    const senderFrame =
      from.frame !== undefined
        ? from.frame
        : { url: from.frameUrl ?? from.sender.url, parent: null };
    return handler({ sender: from.sender, senderFrame }, ...args);
  },
};

export const shell = {
  openExternal: vi.fn(async (_url: string, _options?: unknown) => {}),
  openPath: vi.fn(async () => ''),
};

/**
 * The native file dialogs. Tests set what the "user" picks (`answer`), or `pending` to keep the
 * dialog open until they call `release()`; every call is recorded with the window it was modal to.
 */
export const dialog = {
  calls: [] as Array<{ kind: 'open' | 'save'; parent: unknown; options: Record<string, unknown> }>,
  answer: null as string | null,
  pending: false,
  release: (() => {}) as () => void,
  /** dialog.showErrorBox(title, content) calls (it works before 'ready' too). */
  errorBoxes: [] as Array<{ title: string; content: string }>,
  showErrorBox(title: string, content: string): void {
    this.errorBoxes.push({ title, content });
  },
  /** pkg-b: message boxes shown, and the button the "user" picks (its index). */
  messageBoxes: [] as Array<Record<string, unknown>>,
  messageBoxResponse: 1,
  showMessageBox(options: Record<string, unknown>): Promise<{ response: number }> {
    this.messageBoxes.push(options);
    return Promise.resolve({ response: this.messageBoxResponse });
  },
  show(kind: 'open' | 'save', args: unknown[]) {
    const [first, second] = args;
    const hasParent = second !== undefined;
    this.calls.push({
      kind,
      parent: hasParent ? first : null,
      options: (hasParent ? second : first) as Record<string, unknown>,
    });
    const answer = this.answer;
    const result = () =>
      kind === 'open'
        ? { canceled: answer === null, filePaths: answer === null ? [] : [answer] }
        : { canceled: answer === null, filePath: answer ?? '' };
    if (!this.pending) return Promise.resolve(result());
    return new Promise((resolve) => (this.release = () => resolve(result())));
  },
  showOpenDialog(...args: unknown[]) {
    return this.show('open', args) as Promise<{ canceled: boolean; filePaths: string[] }>;
  },
  showSaveDialog(...args: unknown[]) {
    return this.show('save', args) as Promise<{ canceled: boolean; filePath: string }>;
  },
};

export const clipboard = {
  text: '',
  writeText(text: string): void {
    this.text = text;
  },
  readText(): string {
    return this.text;
  },
};

export interface FakeDisplay {
  id: number;
  bounds: Rect;
  workArea: Rect;
  scaleFactor: number;
}

export const screen = {
  displays: [] as FakeDisplay[],
  cursor: { x: 0, y: 0 },
  getPrimaryDisplay(): FakeDisplay {
    const d = this.displays[0];
    if (!d) throw new Error('no display');
    return d;
  },
  getAllDisplays(): FakeDisplay[] {
    return this.displays;
  },
  getCursorScreenPoint(): { x: number; y: number } {
    return { ...this.cursor };
  },
  getDisplayNearestPoint(point: { x: number; y: number }): FakeDisplay {
    const inside = this.displays.find(
      (d) =>
        point.x >= d.bounds.x &&
        point.x < d.bounds.x + d.bounds.width &&
        point.y >= d.bounds.y &&
        point.y < d.bounds.y + d.bounds.height,
    );
    return inside ?? this.getPrimaryDisplay();
  },
};

export const powerMonitor = new EventEmitter();

type HeadersListener = (
  details: { url: string; responseHeaders?: Record<string, string[]> },
  callback: (response: { responseHeaders?: Record<string, string[]> }) => void,
) => void;

export const session = {
  defaultSession: {
    permissionRequestHandler: null as
      | null
      | ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void),
    permissionCheckHandler: null as null | ((contents: unknown, permission: string) => boolean),
    headersListener: null as null | HeadersListener,
    setPermissionRequestHandler(
      handler: (
        contents: unknown,
        permission: string,
        callback: (granted: boolean) => void,
      ) => void,
    ): void {
      this.permissionRequestHandler = handler;
    },
    setPermissionCheckHandler(handler: (contents: unknown, permission: string) => boolean): void {
      this.permissionCheckHandler = handler;
    },
    webRequest: {
      onHeadersReceived(listener: HeadersListener): void {
        session.defaultSession.headersListener = listener;
      },
    },
  },
};

export const protocol = {
  privileged: [] as unknown[],
  handlers: new Map<string, (request: Request) => Promise<Response> | Response>(),
  registerSchemesAsPrivileged(schemes: unknown[]): void {
    this.privileged.push(...schemes);
  },
  handle(scheme: string, handler: (request: Request) => Promise<Response> | Response): void {
    this.handlers.set(scheme, handler);
  },
};

export const net = { online: true, isOnline: () => net.online };

export const nativeTheme = Object.assign(new EventEmitter(), { shouldUseDarkColors: false });

class FakeApp extends EventEmitter {
  appPath = '/app';
  paths: Record<string, string> = {
    userData: '/tmp/screenpop-test',
    home: '/tmp/screenpop-test-home',
    documents: '/tmp/screenpop-test-home/Documents',
  };
  isPackaged = false;
  singleInstance = true;
  appUserModelId: string | null = null;
  loginItem: { openAtLogin?: boolean } | null = null;
  quitCalls = 0;
  exitCode: number | null = null;
  dock = { hide: vi.fn() };
  private readyResolve!: () => void;
  private readyPromise = new Promise<void>((r) => (this.readyResolve = r));
  getAppPath(): string {
    return this.appPath;
  }
  getPath(name: string): string {
    const p = this.paths[name];
    if (!p) throw new Error(`no path ${name}`);
    return p;
  }
  getVersion(): string {
    return '0.0.0-test';
  }
  /** The OS's preferred languages, best first (tests set it to see the app follow the OS). */
  preferredLanguages: string[] = ['en-US'];
  getPreferredSystemLanguages(): string[] {
    return [...this.preferredLanguages];
  }
  getName(): string {
    return appPlace.name;
  }
  /** pkg-a: the lock is singleInstanceLock's (the section at the end of this file). */
  requestSingleInstanceLock(): boolean {
    return requestLock(this);
  }
  releaseSingleInstanceLock(): void {
    releaseLock();
  }
  hasSingleInstanceLock(): boolean {
    return singleInstanceLock.holder === 'this';
  }
  /** app.relaunch(options) calls (Electron starts the new process when this one exits). */
  relaunches: Array<{ args?: string[]; execPath?: string }> = [];
  relaunch(options: { args?: string[]; execPath?: string } = {}): void {
    this.relaunches.push(options);
  }
  setAppUserModelId(id: string): void {
    this.appUserModelId = id;
  }
  setLoginItemSettings(settings: { openAtLogin?: boolean }): void {
    this.loginItem = settings;
  }
  whenReady(): Promise<void> {
    return this.readyPromise;
  }
  /** Tests call this to let main.ts start. */
  ready(): void {
    this.readyResolve();
  }
  /**
   * As Electron quits: 'before-quit' (preventable), then every window is asked to close (a window
   * whose 'close' is prevented cancels the quit), then 'will-quit' (preventable), 'quit', exit 0.
   */
  quit(): void {
    this.quitCalls++;
    const before = fakeEvent();
    this.emit('before-quit', before);
    if (before.defaultPrevented) return;
    for (const win of BrowserWindow.getAllWindows()) if (!win.close()) return;
    const will = fakeEvent();
    this.emit('will-quit', will);
    if (will.defaultPrevented) return;
    this.emit('quit', fakeEvent(), 0);
    if (this.exitCode === null) this.exitCode = 0;
  }
  /** Ends at once: windows are destroyed without 'close', no 'before-quit' nor 'will-quit'. */
  exit(code = 0): void {
    if (this.exitCode !== null) return;
    this.exitCode = code;
    releaseLock(); // the lock goes with the process
    for (const win of BrowserWindow.getAllWindows()) win.destroy();
  }
  /** Chromium's command line: switches given at launch (tests set them) and those appended. */
  commandLine = {
    switches: new Map<string, string>(),
    appendSwitch(name: string, value?: string): void {
      this.switches.set(name, value ?? '');
    },
    hasSwitch(name: string): boolean {
      return this.switches.has(name);
    },
    getSwitchValue(name: string): string {
      return this.switches.get(name) ?? '';
    },
  };

  // pkg-b: the app's name, Windows' toast activator, macOS's Applications folder (state in appPlace).
  setName(name: string): void {
    appPlace.name = name;
  }
  setPath(name: string, path: string): void {
    this.paths[name] = path;
  }
  /** As Electron: a GUID with or without braces; anything else throws and changes nothing. */
  setToastActivatorCLSID(id: string): void {
    const m = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i.exec(id);
    if (!m) throw new Error(`Invalid CLSID: '${id}'`);
    appPlace.toastActivatorCLSID = `{${m[1]}}`;
  }
  get toastActivatorCLSID(): string {
    return appPlace.toastActivatorCLSID ?? '{00000000-0000-4000-8000-000000000000}';
  }
  isInApplicationsFolder(): boolean {
    return appPlace.inApplicationsFolder;
  }
  moveToApplicationsFolder(): boolean {
    appPlace.moves++;
    return true;
  }
}

export const app = new FakeApp();

// ---------------------------------------------------------------------------------------------
// pkg-b (issue 35 items 5, 6, 8, 10): page loading, menu roles per OS, Windows toast activation,
// the app's name and the macOS Applications folder. Kept apart from the rest of the fake.
// ---------------------------------------------------------------------------------------------

/** The page of `win` has loaded: from now on its web contents receive what is sent. */
function finishLoad(win: BrowserWindow): void {
  win.contents.loaded = true;
  win.contents.emit('did-finish-load');
}

/** A menu item as a template gives it (role names as Electron accepts them, any case). */
export interface RoleItem {
  role?: string;
  type?: string;
  label?: string;
  accelerator?: string;
  submenu?: RoleItem[];
}

/**
 * What Electron's roles expand to (lib/browser/api/menu-item-roles.ts, Electron 45), for the roles
 * an application menu of ours may use: a menu role's items per OS, and a role's own key.
 */
function roleSubmenu(role: string, platform: NodeJS.Platform): RoleItem[] | undefined {
  const mac = platform === 'darwin';
  switch (role.toLowerCase()) {
    case 'appmenu':
      return ['about', '-', 'services', '-', 'hide', 'hideOthers', 'unhide', '-', 'quit'].map(
        (r) => (r === '-' ? { type: 'separator' } : { role: r }),
      );
    case 'filemenu':
      // macOS: Close Window (Cmd+W); elsewhere: Quit.
      return [{ role: mac ? 'close' : 'quit' }];
    case 'editmenu':
      return [
        { role: 'undo' },
        { role: 'redo' },
        { type: 'separator' },
        { role: 'cut' },
        { role: 'copy' },
        { role: 'paste' },
        ...(mac
          ? [{ role: 'pasteAndMatchStyle' }, { role: 'delete' }, { role: 'selectAll' }]
          : [{ role: 'delete' }, { type: 'separator' }, { role: 'selectAll' }]),
      ];
    case 'windowmenu':
      // macOS: Minimize, Zoom, Bring All to Front: no Close there. Elsewhere Close is in it.
      return [
        { role: 'minimize' },
        { role: 'zoom' },
        ...(mac ? [{ type: 'separator' }, { role: 'front' }] : [{ role: 'close' }]),
      ];
    case 'viewmenu':
      return ['reload', 'forceReload', 'toggleDevTools', 'resetZoom', 'zoomIn', 'zoomOut'].map(
        (r) => ({ role: r }),
      );
    default:
      return undefined;
  }
}

function roleAccelerator(role: string, platform: NodeJS.Platform): string | undefined {
  const keys: Record<string, string | undefined> = {
    close: 'CommandOrControl+W',
    copy: 'CommandOrControl+C',
    cut: 'CommandOrControl+X',
    paste: 'CommandOrControl+V',
    selectall: 'CommandOrControl+A',
    undo: 'CommandOrControl+Z',
    redo: platform === 'win32' ? 'Control+Y' : 'Shift+CommandOrControl+Z',
    minimize: 'CommandOrControl+M',
    hide: 'Command+H',
    quit: platform === 'win32' ? undefined : 'CommandOrControl+Q',
    reload: 'CmdOrCtrl+R',
    toggledevtools: platform === 'darwin' ? 'Alt+Command+I' : 'Ctrl+Shift+I',
  };
  return keys[role.toLowerCase()];
}

/** The menu as Electron builds it on `platform`: every role's items and keys filled in. */
export function expandRoles(items: RoleItem[], platform: NodeJS.Platform): RoleItem[] {
  return items.map((item) => {
    const submenu = item.submenu ?? (item.role ? roleSubmenu(item.role, platform) : undefined);
    const accelerator =
      item.accelerator ?? (item.role ? roleAccelerator(item.role, platform) : undefined);
    return {
      ...item,
      ...(accelerator ? { accelerator } : {}),
      ...(submenu ? { submenu: expandRoles(submenu, platform) } : {}),
    };
  });
}

/** Every key the application menu answers to on `platform`, with the role it runs. */
export function menuKeys(
  menu: { template: unknown[] } | null | 'default',
  platform: NodeJS.Platform,
): Map<string, string> {
  const keys = new Map<string, string>();
  if (menu === null || menu === 'default') return keys;
  const walk = (items: RoleItem[]) => {
    for (const item of items) {
      if (item.accelerator && item.role) keys.set(item.accelerator, item.role);
      if (item.submenu) walk(item.submenu);
    }
  };
  walk(expandRoles(menu.template as RoleItem[], platform));
  return keys;
}

/** Windows toast activation (Electron 45's Notification.handleActivation) as tests play it. */
export const toastActivation = {
  handler: null as ((details: { type: string; arguments: string }) => void) | null,
  /** What the first Notification.isSupported() wrote into its shortcut (Windows). */
  shortcut: null as null | {
    name: string;
    appUserModelId: string | null;
    clsid: string | null;
  },
  /** The user clicks a toast in the Action Centre (maybe after the app was restarted). */
  activate(argumentsText: string): void {
    this.handler?.({ type: 'click', arguments: argumentsText });
  },
};

/** The app's name, toast CLSID and (macOS) folder, as main.ts sets and reads them. */
export const appPlace = {
  name: 'Screenpop',
  toastActivatorCLSID: null as string | null,
  /** Tests set it: macOS says whether the app runs from /Applications. */
  inApplicationsFolder: true,
  /** moveToApplicationsFolder() calls (the real one quits and relaunches when it moves). */
  moves: 0,
};

function resetPkgBFakes(): void {
  toastActivation.handler = null;
  toastActivation.shortcut = null;
  dialog.messageBoxes = [];
  dialog.messageBoxResponse = 1;
  appPlace.name = 'Screenpop';
  appPlace.toastActivatorCLSID = null;
  appPlace.inApplicationsFolder = true;
  appPlace.moves = 0;
}

// ─── pkg-a (issue 35 items 2, 3): the single-instance lock, other processes of the app, and ───
// ─── electron-updater's quit-and-install order. Keep other engineers' additions out of here. ───

/**
 * Electron's single-instance lock, as a second process meets it: held by this process from
 * requestSingleInstanceLock() until releaseSingleInstanceLock() or until the process has exited
 * (app.exit; a quit that the app holds with before-quit keeps it meanwhile). Another process of
 * the app (started by an updater, a relaunch, the user) asks for it at once: refused, it ends and
 * this one hears 'second-instance'.
 */
export const singleInstanceLock = {
  holder: null as 'this' | 'another' | null,
  /** requestSingleInstanceLock() calls of this process. */
  requests: 0,
  /** The other processes started while this one ran, and whether each got the lock. */
  others: [] as Array<{
    command: string;
    args: readonly string[];
    gotLock: boolean;
    seen?: unknown;
  }>,
  /** Tests set it to note what this process had done when another one started (`seen`). */
  observe: null as null | (() => unknown),
};

function requestLock(self: FakeApp): boolean {
  singleInstanceLock.requests++;
  // `app.singleInstance = false`: another Screenpop already runs (older tests set this).
  if (!self.singleInstance || singleInstanceLock.holder === 'another') return false;
  singleInstanceLock.holder = 'this';
  return true;
}

function releaseLock(): void {
  if (singleInstanceLock.holder === 'this') singleInstanceLock.holder = null;
}

/** Another process of the app starts now (the new version, a relaunch); returns whether it runs. */
export function startAnotherProcess(command: string, args: readonly string[] = []): boolean {
  const gotLock = singleInstanceLock.holder === null;
  if (gotLock) singleInstanceLock.holder = 'another';
  else app.emit('second-instance', fakeEvent(), [command, ...args], process.cwd());
  const seen = singleInstanceLock.observe?.();
  singleInstanceLock.others.push({ command, args, gotLock, ...(seen !== undefined && { seen }) });
  return gotLock;
}

/**
 * electron-updater 6.8's autoUpdater for an AppImage, what the app meets of it: the settings it
 * reads, 'update-downloaded' (tests call download()), and quitAndInstall in its own order
 * (BaseUpdater.quitAndInstall + AppImageUpdater.doInstall): synchronously the running file
 * ($APPIMAGE) is replaced by the download, renamed after it when the old name holds a version
 * ('appimage-filename-updated'), and the new file is started (with no arguments); then, on the
 * next turn, 'before-quit-for-update' and app.quit(). A failed install is an 'error' event and
 * no quit, as there. Tests use it as `vi.mock('electron-updater', ...)` (update-relaunch.test.ts).
 */
export class FakeAppImageUpdater extends EventEmitter {
  logger: unknown = null;
  autoDownload = false;
  autoInstallOnAppQuit = true;
  forceDevUpdateConfig = false;
  updateConfigPath: string | null = null;
  allowDowngrade = false;
  channel: string | null = null;
  feeds: unknown[] = [];
  checks = 0;
  downloaded: { version: string; file: string } | null = null;
  /** Set it to make the installer fail to start. */
  failInstall: Error | null = null;
  installs: Array<{ from: string; to: string }> = [];
  setFeedURL(options: unknown): void {
    this.feeds.push(options);
  }
  async checkForUpdates(): Promise<null> {
    this.checks++;
    return null;
  }
  /** The feed's newer version has downloaded into `file`. */
  download(version: string, file: string): void {
    this.downloaded = { version, file };
    this.emit('update-downloaded', { version, downloadedFile: file });
  }
  quitAndInstall(_isSilent = false, isForceRunAfter = false): void {
    const current = process.env.APPIMAGE;
    if (this.failInstall || !this.downloaded || !current) {
      this.emit('error', this.failInstall ?? new Error('APPIMAGE env is not defined'));
      return;
    }
    const name = current.slice(current.lastIndexOf('/') + 1);
    const newName = this.downloaded.file.slice(this.downloaded.file.lastIndexOf('/') + 1);
    const to =
      newName === name || !/\d+\.\d+\.\d+/.test(name)
        ? current
        : `${current.slice(0, current.lastIndexOf('/'))}/${newName}`;
    this.installs.push({ from: current, to });
    if (to !== current) this.emit('appimage-filename-updated', to);
    if (isForceRunAfter) startAnotherProcess(to, []);
    setImmediate(() => {
      this.emit('before-quit-for-update');
      app.quit();
    });
  }
}

export function resetElectronMock(): void {
  resetPkgBFakes();
  singleInstanceLock.holder = null;
  singleInstanceLock.requests = 0;
  singleInstanceLock.others = [];
  singleInstanceLock.observe = null;
  app.relaunches = [];
  BrowserWindow.instances = [];
  Menu.application = 'default';
  Tray.instances = [];
  Notification.instances = [];
  Notification.supported = true;
  Notification.refusal = null;
  Notification.platform = 'win32';
  ipcMain.handlers.clear();
  shell.openExternal.mockClear();
  clipboard.text = '';
  dialog.calls = [];
  dialog.answer = null;
  dialog.pending = false;
  dialog.release = () => {};
  dialog.errorBoxes = [];
  screen.displays = [
    {
      id: 1,
      bounds: { x: 0, y: 0, width: 1920, height: 1080 },
      workArea: { x: 0, y: 0, width: 1920, height: 1040 },
      scaleFactor: 1,
    },
    {
      id: 2,
      bounds: { x: 1920, y: -200, width: 2560, height: 1440 },
      workArea: { x: 1920, y: -175, width: 2560, height: 1415 },
      scaleFactor: 2,
    },
  ];
  screen.cursor = { x: 100, y: 100 };
  powerMonitor.removeAllListeners();
  session.defaultSession.permissionRequestHandler = null;
  session.defaultSession.permissionCheckHandler = null;
  session.defaultSession.headersListener = null;
  BrowserWindow.failLoads = false;
  protocol.handlers.clear();
  protocol.privileged = [];
  net.online = true;
  nativeTheme.shouldUseDarkColors = false;
}
resetElectronMock();

export default {
  app,
  BrowserWindow,
  Tray,
  Menu,
  Notification,
  ipcMain,
  shell,
  clipboard,
  dialog,
  screen,
  powerMonitor,
  session,
  nativeImage,
  nativeTheme,
  protocol,
  net,
};
