import { LedgerbotError } from '../../core/ledgerbot-error.js';

export type AuthErrorCode =
  | 'AUTH_CONFIG_INVALID'
  | 'AUTH_TOKEN_FILE_MISSING'
  | 'AUTH_TOKEN_FILE_EMPTY'
  | 'AUTH_TOKEN_FILE_UNREADABLE'
  | 'AUTH_OAUTH2_REJECTED'
  | 'AUTH_OAUTH2_UNAVAILABLE'
  | 'AUTH_OAUTH2_UNREACHABLE'
  | 'AUTH_OAUTH2_BAD_RESPONSE'
  | 'AUTH_CLOSED';

/**
 * Getting a token failed. Messages name the file or the token URL, never a token or a secret.
 * `retryable` is true when trying again later may help without anyone changing the configuration
 * (the token endpoint was unreachable, overloaded or answered 5xx).
 */
export class AuthError extends LedgerbotError {
  declare readonly code: AuthErrorCode;
  readonly retryable: boolean;

  constructor(
    code: AuthErrorCode,
    message: string,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(code, message, options);
    this.retryable = options?.retryable ?? false;
  }
}
