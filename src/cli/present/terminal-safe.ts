/**
 * Characters a terminal acts on instead of showing: C0 controls other than tab and newline (a
 * lone carriage return rewrites the line it ends), DEL, C1 controls (U+009B is a CSI to some
 * terminals) and the bidirectional overrides and isolates that reorder what is shown.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** An SGR sequence (colour, bold, dim: what colour.ts and pino-pretty write), or an unsafe character. */
const SGR_OR_UNSAFE = new RegExp(`\u001b\\[[0-9;]{0,32}m|\r\n|${UNSAFE.source}`, 'g');

/**
 * `text` as the CLI writes it: every character a terminal would act on is written as its
 * `\uXXXX` escape, which also keeps a JSON log line valid JSON. Rule files, configs and ledger
 * data reach the CLI's messages and logs, and an escape sequence in one of them must not set the
 * terminal's title, clear the screen or spoof a line. Only colour (SGR) sequences pass, as the
 * CLI's own colours need, and not SGR 8, which hides text.
 */
export function terminalSafe(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(SGR_OR_UNSAFE, (match) => {
    if (match === '\r\n') return match;
    if (match.length === 1) return escaped(match);
    return match.slice(2, -1).split(';').includes('8') ? escaped('\u001b') + match.slice(1) : match;
  });
}

function escaped(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
