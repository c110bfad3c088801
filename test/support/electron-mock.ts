/**
 * One shared fake of the `electron` module for tests (the electron/fiddle pattern), used as
 *   vi.mock('electron', () => import('../support/electron-mock.ts'));
 * Each fake keeps what was done to it (windows' bounds and visibility, sent IPC messages, tray
 * state, notifications, registered handlers) so tests assert on behaviour, and lets tests play the
 * OS's part (emit 'click', invoke an IPC channel from a given frame, move the pointer).
 * resetElectronMock() clears everything between tests.
 */
import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

let nextId = 1;

export class FakeWebContents extends EventEmitter {
  readonly id = nextId++;
  url = '';
  sent: Array<{ channel: string; args: unknown[] }> = [];
  windowOpenHandler: ((details: { url: string }) => { action: 'allow' | 'deny' }) | null = null;
  destroyed = false;
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'allow' | 'deny' }): void {
    this.windowOpenHandler = handler;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  getURL(): string {
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

export class BrowserWindow extends EventEmitter {
  static instances: BrowserWindow[] = [];
  readonly options: Record<string, unknown>;
  readonly webContents = new FakeWebContents();
  bounds: Rect;
  visible = false;
  focused = false;
  destroyed = false;
  minimized = false;
  calls: string[] = [];
  alwaysOnTop: { flag: boolean; level?: string } = { flag: false };
  loadedUrl: string | null = null;

  constructor(options: Record<string, unknown> = {}) {
    super();
    this.options = options;
    this.bounds = {
      x: 0,
      y: 0,
      width: Number(options.width ?? 800),
      height: Number(options.height ?? 600),
    };
    this.alwaysOnTop = { flag: options.alwaysOnTop === true };
    BrowserWindow.instances.push(this);
  }
  static getAllWindows(): BrowserWindow[] {
    return BrowserWindow.instances.filter((w) => !w.destroyed);
  }
  static fromWebContents(contents: unknown): BrowserWindow | null {
    return BrowserWindow.instances.find((w) => w.webContents === contents) ?? null;
  }
  loadURL(url: string): Promise<void> {
    this.loadedUrl = url;
    this.webContents.url = url;
    return Promise.resolve();
  }
  show(): void {
    this.calls.push('show');
    this.visible = true;
    this.focused = true;
  }
  showInactive(): void {
    this.calls.push('showInactive');
    this.visible = true;
  }
  hide(): void {
    this.calls.push('hide');
    this.visible = false;
  }
  focus(): void {
    this.calls.push('focus');
    this.focused = true;
  }
  isVisible(): boolean {
    return this.visible;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  setBounds(bounds: Rect): void {
    this.bounds = { ...bounds };
  }
  getBounds(): Rect {
    return { ...this.bounds };
  }
  setAlwaysOnTop(flag: boolean, level?: string): void {
    this.alwaysOnTop = { flag, ...(level ? { level } : {}) };
  }
  setVisibleOnAllWorkspaces(): void {}
  close(): void {
    this.calls.push('close');
    this.destroy();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.webContents.destroyed = true;
    this.emit('closed');
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

export const nativeImage = {
  createFromPath: (path: string) => ({ path, isEmpty: () => false }),
};

export class Tray {
  static instances: Tray[] = [];
  image: unknown;
  tooltip = '';
  title = '';
  menu: { template: MenuItem[] } | null = null;
  destroyed = false;
  constructor(image: unknown) {
    this.image = image;
    Tray.instances.push(this);
  }
  setImage(image: unknown): void {
    this.image = image;
  }
  setToolTip(text: string): void {
    this.tooltip = text;
  }
  setTitle(text: string): void {
    this.title = text;
  }
  setContextMenu(menu: { template: MenuItem[] }): void {
    this.menu = menu;
  }
  destroy(): void {
    this.destroyed = true;
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
  static isSupported(): boolean {
    return Notification.supported;
  }
  show(): void {
    this.shown = true;
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
  quit(): void {
    this.quitCalls++;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.exitCode = 0;
  }
  exit(code = 0): void {
    this.exitCode = code;
  }
}

export const app = new FakeApp();

export function resetElectronMock(): void {
  BrowserWindow.instances = [];
  Tray.instances = [];
  Notification.instances = [];
  Notification.supported = true;
  ipcMain.handlers.clear();
  shell.openExternal.mockClear();
  clipboard.text = '';
  dialog.calls = [];
  dialog.answer = null;
  dialog.pending = false;
  dialog.release = () => {};
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
  protocol.handlers.clear();
  protocol.privileged = [];
  net.online = true;
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
  protocol,
  net,
};
