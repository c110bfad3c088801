/**
 * Draws the app's icons as PNG files, with no image library: the tray icons (one per connection
 * state, 16 px and 32 px for @2x displays; the state is told by shape as well as colour) and the
 * application icon (1024 px, from which electron-builder makes .icns and .ico).
 * Run: npm exec -- node assets/generate-icons.ts
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

const WHITE: RGBA = [255, 255, 255, 255];
const TRAY: Record<string, Array<[Shape, RGBA]>> = {
  // Filled green disc with a white dot: all good.
  connected: [
    [circle(0.5, 0.5, 0.44), [22, 163, 74, 255]],
    [circle(0.5, 0.5, 0.14), WHITE],
  ],
  // Grey ring: trying.
  connecting: [[ring(0.5, 0.5, 0.36, 0.14), [107, 114, 128, 255]]],
  // Amber disc with a white bar: working, with problems.
  degraded: [
    [circle(0.5, 0.5, 0.44), [217, 119, 6, 255]],
    [box(0.5, 0.5, 0.26, 0.08, 0.03), WHITE],
  ],
  // Grey disc struck through: no connection (or paused).
  offline: [
    [circle(0.5, 0.5, 0.44), [107, 114, 128, 255]],
    [rotated(box(0.5, 0.5, 0.32, 0.06, 0.03), Math.PI / 4), WHITE],
  ],
  // Red disc with "!": the user must act (bad key, IP not allowed).
  'needs-attention': [
    [circle(0.5, 0.5, 0.44), [220, 38, 38, 255]],
    [box(0.5, 0.4, 0.065, 0.2, 0.03), WHITE],
    [circle(0.5, 0.76, 0.075), WHITE],
  ],
};

// The app icon: a blue rounded square with a white call "bubble" popping from the corner.
const APP: Array<[Shape, RGBA]> = [
  [box(0.5, 0.5, 0.44, 0.44, 0.1), [37, 99, 235, 255]],
  [box(0.5, 0.46, 0.28, 0.2, 0.06), WHITE],
  [rotated(box(0.38, 0.655, 0.075, 0.075, 0.01), Math.PI / 4, 0.38, 0.655), WHITE],
  [circle(0.39, 0.46, 0.045), [37, 99, 235, 255]],
  [circle(0.5, 0.46, 0.045), [37, 99, 235, 255]],
  [circle(0.61, 0.46, 0.045), [37, 99, 235, 255]],
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
