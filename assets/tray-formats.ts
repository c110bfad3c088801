/**
 * The tray icons in each OS's own form, made from the drawn PNGs in assets/tray/ (generate-icons.ts):
 * - Windows: `<state>.ico`, the 16 px and 32 px PNGs in one icon file (Windows picks the size for
 *   the display's scale; Electron recommends ICO for tray icons there);
 * - macOS: `<state>Template.png` and `@2x`: black with the drawn alpha, so the menu bar draws them
 *   in its own colour, light or dark (Electron makes a file named `*Template` a template image).
 *   The states differ by shape, not only by colour, so they stay apart without it.
 * Run after generate-icons.ts: npm exec -- node assets/tray-formats.ts
 * test/electron/tray-icons.test.ts fails when these files do not match the PNGs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync, inflateSync } from 'node:zlib';

export const TRAY_STATES = [
  'connected',
  'connecting',
  'degraded',
  'offline',
  'needs-attention',
] as const;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An 8-bit RGBA PNG's size and pixels (the only kind generate-icons.ts writes). */
export function decodePng(file: Buffer): { width: number; height: number; rgba: Buffer } {
  if (!file.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (offset < file.length) {
    const length = file.readUInt32BE(offset);
    const type = file.toString('ascii', offset + 4, offset + 8);
    const data = file.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[9] !== 6 || data[12] !== 0)
        throw new Error('only 8-bit RGBA PNGs without interlacing');
    } else if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  const rgba = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= 4 ? rgba[y * stride + x - 4]! : 0;
      const b = y > 0 ? rgba[(y - 1) * stride + x]! : 0;
      const c = x >= 4 && y > 0 ? rgba[(y - 1) * stride + x - 4]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter ?? 0];
      if (predictor === undefined) throw new Error(`unknown PNG filter ${filter}`);
      rgba[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  return { width, height, rgba };
}

/** An 8-bit RGBA PNG, unfiltered rows (generate-icons.ts draws with it too). */
export function encodePng(width: number, height: number, rgba: Buffer): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const raw = Buffer.alloc(height * (width * 4 + 1));
  for (let y = 0; y < height; y++)
    rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An .ico holding the given PNGs as they are (Windows Vista and later read PNG entries). */
export function icoOf(pngs: Buffer[]): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // icon
  header.writeUInt16LE(pngs.length, 4);
  const entries: Buffer[] = [];
  let offset = 6 + 16 * pngs.length;
  for (const png of pngs) {
    const { width, height } = decodePng(png);
    const entry = Buffer.alloc(16);
    entry[0] = width >= 256 ? 0 : width;
    entry[1] = height >= 256 ? 0 : height;
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(png.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += png.length;
    entries.push(entry);
  }
  return Buffer.concat([header, ...entries, ...pngs]);
}

const luminance = (px: Buffer, i: number) =>
  0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!;

/**
 * The same picture as a macOS template image: black, and where the drawing puts its white sign on
 * the coloured disc (the dot, the bar, the stroke, the "!"), a hole, so the sign stays visible in a
 * single colour. How white a pixel is: its luminance between the disc's (the most common opaque
 * colour) and white, which keeps the anti-aliased edges smooth.
 */
export function templateOf(png: Buffer): Buffer {
  const { width, height, rgba } = decodePng(png);
  const counts = new Map<number, number>();
  for (let i = 0; i < rgba.length; i += 4)
    if (rgba[i + 3] === 255) {
      const key = rgba.readUInt32BE(i);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  const disc = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const base =
    disc === undefined
      ? 0
      : luminance(Buffer.from([disc >>> 24, (disc >>> 16) & 0xff, (disc >>> 8) & 0xff]), 0);
  const out = Buffer.alloc(rgba.length);
  for (let i = 0; i < rgba.length; i += 4) {
    const white =
      base >= 255 ? 0 : Math.min(1, Math.max(0, (luminance(rgba, i) - base) / (255 - base)));
    out[i + 3] = Math.round(rgba[i + 3]! * (1 - white));
  }
  return encodePng(width, height, out);
}

/** Every derived file: its name in assets/tray/ and its bytes. */
export function trayFormats(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const state of TRAY_STATES) {
    const one = readFileSync(join(dir, `${state}.png`));
    const two = readFileSync(join(dir, `${state}@2x.png`));
    out.set(`${state}.ico`, icoOf([one, two]));
    out.set(`${state}Template.png`, templateOf(one));
    out.set(`${state}Template@2x.png`, templateOf(two));
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'tray');
  for (const [name, bytes] of trayFormats(dir)) writeFileSync(join(dir, name), bytes);
  console.log(`wrote the Windows .ico and macOS template tray icons in ${dir}`);
}
