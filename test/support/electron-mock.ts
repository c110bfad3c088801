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
  private alive(): void {
    if (this.destroyed) throw destroyedError();
  }
  send(channel: string, ...args: unknown[]): void {
    this.alive();
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
    // The first paint of a hidden window comes after the load: 'ready-to-show' on a later tick.
    setImmediate(() => {
      if (!this.destroyed && !this.visible && this.options.paintWhenInitiallyHidden !== false)
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
    return Notification.supported;
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
    return 'Screenpop';
  }
  requestSingleInstanceLock(): boolean {
    return this.singleInstance;
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
}

export const app = new FakeApp();

export function resetElectronMock(): void {
  BrowserWindow.instances = [];
  Menu.application = 'default';
  Tray.instances = [];
  Notification.instances = [];
  Notification.supported = true;
  Notification.refusal = null;
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
