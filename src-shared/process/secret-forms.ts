/// <reference types="node" />
// Node's globals are used here; the renderer's type check (tsconfig.web.json, without Node's
// types) reaches this file through the core's types, so it names them itself.
/**
 * The ways a registered secret can be written in text that reaches a log, an error or a diagnostics
 * archive, so that the SecretRegistry (log.ts) finds it in each: as is; percent-encoded (a secret
 * in a URL or a form body); JSON-escaped (a secret inside a JSON string, with `\"`, `\\` or `\uXXXX`);
 * and base64, standard and URL-safe, at each of the three positions it can take inside a longer
 * encoded text (`Basic` credentials encode `user:secret`, not the secret alone). Upper and lower
 * case are matched by the registry itself (case-insensitively).
 */

/** Shorter forms than this are not scrubbed: they would match ordinary words. */
export const MIN_SECRET_LENGTH = 6;

/**
 * The base64 characters that encode `bytes` whatever comes before and after them in a longer
 * text: for each of the three alignments, the characters fully determined by the secret's bits.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let lead = 0; lead < 3; lead++) {
    const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString('base64');
    const from = Math.ceil((8 * lead) / 6);
    const to = Math.floor((8 * (lead + bytes.length)) / 6);
    cores.push(encoded.slice(from, to));
  }
  return cores;
}

/** JSON string escaping, once as JSON.stringify writes it and once with every non-ASCII as \uXXXX. */
function jsonForms(secret: string): string[] {
  const plain = JSON.stringify(secret).slice(1, -1);
  const ascii = plain.replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return [plain, ascii];
}

/** Every form of `secret` worth looking for (the secret itself first), without duplicates. */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [secret, encodeURIComponent(secret), ...jsonForms(secret)];
  for (const core of base64Cores(bytes))
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}
