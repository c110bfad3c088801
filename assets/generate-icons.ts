/**
 * Draws the app's icons as PNG files, with no image library: the tray icons (one per connection
 * state, 16 px and 32 px for @2x displays; the state is told by shape as well as colour) and the
 * application icon (1024 px, from which electron-builder makes .icns and .ico). Both show a
 * telephone handset: the tray icon says "phone" and, being the app icon's mark, "this app".
 * Run: npm exec -- node assets/generate-icons.ts, then npm exec -- node assets/tray-formats.ts
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodePng } from './tray-formats.ts';

type RGBA = [number, number, number, number];
/** Signed distance (in px, negative inside) from a point to a shape, in a unit square scaled to size. */
type Shape = (x: number, y: number) => number;

const here = dirname(fileURLToPath(import.meta.url));

/** Paints layers (shape + colour) back to front with anti-aliased edges. */
function render(size: number, layers: Array<[Shape, RGBA]>): Buffer {
  const px = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      let [r, g, b, a] = [0, 0, 0, 0];
      const u = (x + 0.5) / size;
      const v = (y + 0.5) / size;
      for (const [shape, [cr, cg, cb, ca]] of layers) {
        const cover = Math.min(1, Math.max(0, 0.5 - shape(u, v) * size)) * (ca / 255);
        r = cr * cover + r * (1 - cover);
        g = cg * cover + g * (1 - cover);
        b = cb * cover + b * (1 - cover);
        a = cover + a * (1 - cover);
      }
      const i = (y * size + x) * 4;
      px[i] = a > 0 ? Math.round(r) : 0;
      px[i + 1] = a > 0 ? Math.round(g) : 0;
      px[i + 2] = a > 0 ? Math.round(b) : 0;
      px[i + 3] = Math.round(a * 255);
    }
  return encodePng(size, size, Buffer.from(px.buffer));
}

const circle =
  (cx: number, cy: number, rad: number): Shape =>
  (x, y) =>
    Math.hypot(x - cx, y - cy) - rad;
const ring =
  (cx: number, cy: number, rad: number, width: number): Shape =>
  (x, y) =>
    Math.abs(Math.hypot(x - cx, y - cy) - rad) - width / 2;
const box =
  (cx: number, cy: number, hw: number, hh: number, round = 0): Shape =>
  (x, y) => {
    const dx = Math.abs(x - cx) - hw + round;
    const dy = Math.abs(y - cy) - hh + round;
    return Math.hypot(Math.max(dx, 0), Math.max(dy, 0)) + Math.min(Math.max(dx, dy), 0) - round;
  };
const rotated =
  (shape: Shape, angle: number, cx = 0.5, cy = 0.5): Shape =>
  (x, y) => {
    const c = Math.cos(-angle);
    const s = Math.sin(-angle);
    return shape(cx + (x - cx) * c - (y - cy) * s, cy + (x - cx) * s + (y - cy) * c);
  };

/** Union and difference of shapes (signed distances). */
const union =
  (...shapes: Shape[]): Shape =>
  (x, y) =>
    Math.min(...shapes.map((s) => s(x, y)));
const minus =
  (shape: Shape, cut: Shape): Shape =>
  (x, y) =>
    Math.max(shape(x, y), -cut(x, y));

/**
 * A telephone handset (the "phone" in every icon): a thick quarter arc with an earpiece and a
 * mouthpiece at its ends, both facing the corner the arc opens to (bottom right), where the tray
 * icons put their state sign. `s` scales it about the arc's centre, (cx, cy).
 */
function handset(cx: number, cy: number, s: number): Shape {
  const r = 0.34 * s;
  const w = 0.15 * s;
  const left: [number, number] = [cx - r, cy];
  const top: [number, number] = [cx, cy - r];
  const arc: Shape = (x, y) =>
    x <= cx && y <= cy
      ? Math.abs(Math.hypot(x - cx, y - cy) - r) - w / 2
      : Math.min(Math.hypot(x - left[0], y - left[1]), Math.hypot(x - top[0], y - top[1])) - w / 2;
  return union(
    arc,
    box(left[0] + 0.045 * s, cy + 0.05 * s, 0.12 * s, 0.085 * s, 0.05 * s),
    box(cx + 0.05 * s, top[1] + 0.045 * s, 0.085 * s, 0.12 * s, 0.05 * s),
  );
}

const WHITE: RGBA = [255, 255, 255, 255];

/**
 * The tray icons: the app's mark (a white handset on a rounded tile) on a tile coloured by the
 * state, with the state's sign in the corner the handset opens to, so the states differ by shape
 * as well as colour (and in the single-colour macOS templates). Each tile colour has a luminance
 * of about 0.2, which gives at least 3:1 (WCAG's figure for icons) against a light (#f0f0f0) and a
 * dark (#202020) panel both, and 4:1 for its white handset and sign (test/electron/tray.test.ts).
 */
const TILE = box(0.5, 0.5, 0.48, 0.48, 0.16);
const PHONE = handset(0.6, 0.6, 1.05);
const tray = (colour: RGBA, ...sign: Shape[]): Array<[Shape, RGBA]> => [
  [TILE, colour],
  [PHONE, WHITE],
  ...sign.map((s): [Shape, RGBA] => [s, WHITE]),
];
const TRAY_COLOURS = {
  connected: [22, 143, 63, 255],
  connecting: [47, 110, 230, 255],
  degraded: [194, 96, 10, 255],
  offline: [117, 123, 134, 255],
  'needs-attention': [224, 48, 47, 255],
} satisfies Record<string, RGBA>;

const TRAY: Record<string, Array<[Shape, RGBA]>> = {
  // The handset alone: connected, calls will pop.
  connected: tray(TRAY_COLOURS.connected),
  // Two dots after the handset: trying.
  connecting: tray(TRAY_COLOURS.connecting, circle(0.62, 0.8, 0.075), circle(0.82, 0.8, 0.075)),
  // A bar: working, with problems (a trunk down).
  degraded: tray(TRAY_COLOURS.degraded, box(0.74, 0.78, 0.17, 0.07, 0.03)),
  // The handset struck through (a band cut out round the stroke so it reads at 16 px): offline.
  offline: [
    [TILE, TRAY_COLOURS.offline],
    [minus(PHONE, rotated(box(0.5, 0.5, 0.6, 0.13), Math.PI / 4)), WHITE],
    [rotated(box(0.5, 0.5, 0.36, 0.055, 0.03), Math.PI / 4), WHITE],
  ],
  // "!": the user must act (bad key, IP not allowed).
  'needs-attention': tray(
    TRAY_COLOURS['needs-attention'],
    box(0.76, 0.62, 0.065, 0.14, 0.03),
    circle(0.76, 0.86, 0.07),
  ),
};

// The app icon: the same white handset on a blue rounded square, with two "ringing" arcs in the
// corner it opens to: a phone that rings, not a chat bubble (the old icon read as a messaging app).
const BLUE: RGBA = [37, 99, 235, 255];
const wave =
  (rad: number): Shape =>
  (x, y) =>
    Math.max(ring(0.56, 0.56, rad, 0.06)(x, y), 0.56 - x, 0.56 - y);
const APP: Array<[Shape, RGBA]> = [
  [box(0.5, 0.5, 0.44, 0.44, 0.1), BLUE],
  [handset(0.56, 0.56, 0.95), WHITE],
  [wave(0.17), WHITE],
  [wave(0.29), WHITE],
];

function write(path: string, data: Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
  console.log(`${path} (${data.length} bytes)`);
}

for (const [name, layers] of Object.entries(TRAY)) {
  write(join(here, 'tray', `${name}.png`), render(16, layers));
  write(join(here, 'tray', `${name}@2x.png`), render(32, layers));
}
write(join(here, 'icon.png'), render(1024, APP));
write(join(here, 'icon-256.png'), render(256, APP));
