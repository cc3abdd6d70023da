import { hash } from 'node:crypto';

/** Lowercase hex sha256. The one-shot `hash` is about twice as fast as createHash for short inputs. */
export function sha256Hex(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}
