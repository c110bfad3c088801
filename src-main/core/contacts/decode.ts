/**
 * A contacts file's bytes as text. Exports come in whatever encoding their program chose: Google
 * writes UTF-8 (with a byte-order mark), Outlook for Windows writes the system's ANSI code page
 * (Windows-1252 in Western Europe: "Straße" is the byte 0xDF) unless told otherwise, some tools
 * write UTF-16. A byte-order mark decides; else valid UTF-8 is UTF-8, and anything else is read as
 * Windows-1252 (which maps every byte), so a file never fails to decode and never shows
 * replacement characters where an accent was.
 */
export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** UTF-16 without a byte-order mark: most odd (or even) bytes are zero in Latin text. */
function utf16Order(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(bytes.length - (bytes.length % 2), 4096);
  if (n < 4) return null;
  let zeroEven = 0;
  let zeroOdd = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) zeroEven++;
    if (bytes[i + 1] === 0) zeroOdd++;
  }
  const pairs = n / 2;
  if (zeroOdd > pairs * 0.4 && zeroEven === 0) return 'utf-16le';
  if (zeroEven > pairs * 0.4 && zeroOdd === 0) return 'utf-16be';
  return null;
}

export function decodeText(bytes: Uint8Array): { text: string; encoding: TextEncodingName } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8' };
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le' };
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be' };
  const order = utf16Order(bytes);
  if (order) return { text: new TextDecoder(order).decode(bytes), encoding: order };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
  }
}

/**
 * Bytes in a named character set (a vCard 2.1 CHARSET parameter) as text; an unknown or unsupported
 * name reads as UTF-8 when valid, else Windows-1252, like a whole file.
 */
export function decodeCharset(bytes: Uint8Array, charset: string | undefined): string {
  const name = (charset ?? '').trim().toLowerCase();
  if (name && name !== 'utf-8' && name !== 'utf8') {
    try {
      return new TextDecoder(name).decode(bytes);
    } catch {
      // An unknown label: fall through to the guess.
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}
