/**
 * Test-only instrumentation, loaded into the Electron main process before the app with `-r` by the
 * e2e launcher (never part of the app or its package). Electron offers no API to read a tray's
 * menu or to learn whether a notification was shown, so this records both from Electron's own
 * classes, and the tests read globalThis.__screenpopE2E through playwright's evaluate():
 * - every context menu set on a tray (items' id, label, type, checked, enabled), and the last Menu
 *   itself, whose items the tests click the way the tray would;
 * - every Notification shown: title, body, its action buttons' labels, and whether the OS reported
 *   it shown or failed.
 */
'use strict';
// CommonJS on purpose: `-r` preloads a CommonJS module before the app's own main.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Notification, Tray } = require('electron');

const e2e = { menus: [], menu: null, notifications: [] };
globalThis.__screenpopE2E = e2e;

function describeItems(items) {
  return items.map((item) => ({
    id: item.id || null,
    label: item.label,
    type: item.type,
    checked: item.checked,
    enabled: item.enabled,
    submenu: item.submenu ? describeItems(item.submenu.items) : null,
  }));
}

const setContextMenu = Tray.prototype.setContextMenu;
Tray.prototype.setContextMenu = function (menu) {
  if (menu && Array.isArray(menu.items)) {
    e2e.menu = menu;
    e2e.menus.push(describeItems(menu.items));
  }
  return setContextMenu.call(this, menu);
};

const show = Notification.prototype.show;
Notification.prototype.show = function () {
  const record = {
    title: this.title,
    body: this.body,
    actions: (this.actions || []).map((a) => a.text),
    shown: false,
    failed: null,
  };
  e2e.notifications.push(record);
  this.once('show', () => {
    record.shown = true;
  });
  this.once('failed', (_event, error) => {
    record.failed = String(error);
  });
  return show.call(this);
};
