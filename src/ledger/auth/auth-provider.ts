/**
 * Supplies the bearer token for each HTTP request and websocket handshake.
 * Implementations cache and refresh; `token()` is called often and must be cheap when cached.
 */
export interface AuthProvider {
  /** The token to send, or undefined to send none. */
  token(signal?: AbortSignal): Promise<string | undefined>;
  /** Drops a cached token after the participant rejected it (401), so the next call fetches anew. */
  invalidate(): void;
  /** Releases watchers and timers. Idempotent. */
  close(): Promise<void>;
}
