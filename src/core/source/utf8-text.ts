import { isUtf8 } from 'node:buffer';
import { textPos } from './guard-text.js';

/**
 * The text of a file that must be UTF-8, or where it is not: a Latin-1 file decoded anyway turns
 * its accented letters into U+FFFD, and the problem then reported ("the character U+FFFD in the
 * id") would blame the wrong thing. The position is that of the first such character.
 */
export function utf8Text(
  bytes: Uint8Array,
):
  { readonly ok: true; readonly text: string } | { readonly ok: false; line: number; col: number } {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (isUtf8(bytes)) return { ok: true, text };
  const { line, col } = textPos(text, Math.max(0, text.indexOf('\uFFFD')));
  return { ok: false, line, col };
}
