import type { WebSocket } from 'ws';
import type { Clock, TimerHandle } from '../../core/clock.js';

/** Below Canton's 60 s idle timeout with room for a slow event loop (NOTES.md, Corrections). */
export const DEFAULT_PING_INTERVAL_MS = 25_000;

/**
 * Sends a websocket ping every `intervalMs` while a socket is open. Canton's HTTP server
 * (pekko-http, `idle-timeout = 60 s`) closes a websocket that carried no frame either way for a
 * minute, and a quiet ledger sends nothing: no updates and no checkpoints. Any frame counts, so
 * a ping keeps the stream up and spares a reconnect, its warning and a flapping connected gauge.
 * The pong is not awaited: a dead peer shows as a failed write or a close.
 */
export class WsKeepAlive {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #timer: TimerHandle | undefined;
  #ws: WebSocket | undefined;
  #pings = 0;

  /** `intervalMs` 0 disables the pings. */
  constructor(clock: Clock, intervalMs: number) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** Pings sent so far (for tests and metrics). */
  get pings(): number {
    return this.#pings;
  }

  /** Starts pinging `ws`, which must be open. */
  start(ws: WebSocket): void {
    if (this.#intervalMs <= 0) return;
    this.stop();
    this.#ws = ws;
    this.#schedule();
  }

  /** Idempotent. */
  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#ws = undefined;
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => this.#ping(), this.#intervalMs);
  }

  #ping(): void {
    const ws = this.#ws;
    this.#timer = undefined;
    if (ws === undefined || ws.readyState !== ws.OPEN) return;
    try {
      ws.ping();
      this.#pings += 1;
    } catch {
      // The socket is going down; its close event ends the stream.
      return;
    }
    this.#schedule();
  }
}
