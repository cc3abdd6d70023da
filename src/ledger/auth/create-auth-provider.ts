import type { Dispatcher } from 'undici';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { AuthError } from './auth-error.js';
import type { AuthProvider } from './auth-provider.js';
import { NoAuth } from './no-auth.js';
import {
  OAuth2ClientCredentialsAuth,
  type OAuth2ClientCredentialsOptions,
} from './oauth2-client-credentials-auth.js';
import { REDACTED, redactUrl } from './redact-secrets.js';
import { StaticTokenAuth } from './static-token-auth.js';
import { TokenFileAuth } from './token-file-auth.js';

export type AuthConfig =
  | { readonly type: 'none' }
  | { readonly type: 'static'; readonly token: string }
  | { readonly type: 'file'; readonly path: string }
  | ({ readonly type: 'oauth2' } & OAuth2Config);

/** The OAuth2 options a config sets; the timing knobs and dependencies are not configurable. */
type OAuth2Config = Pick<
  OAuth2ClientCredentialsOptions,
  'tokenUrl' | 'clientId' | 'clientSecret' | 'audience' | 'scope' | 'clientAuth'
>;

export type AuthDeps = {
  readonly clock?: Clock;
  readonly dispatcher?: Dispatcher;
  readonly logger?: Logger;
};

/** Builds the provider a config asks for. Does no I/O: files and endpoints are read on first use. */
export function createAuthProvider(config: AuthConfig, deps: AuthDeps = {}): AuthProvider {
  switch (config.type) {
    case 'none':
      return new NoAuth();
    case 'static':
      return new StaticTokenAuth(config.token);
    case 'file':
      return new TokenFileAuth(
        config.path,
        deps.logger === undefined ? {} : { logger: deps.logger },
      );
    case 'oauth2':
      return new OAuth2ClientCredentialsAuth({
        tokenUrl: config.tokenUrl,
        clientId: config.clientId,
        clientSecret: config.clientSecret,
        ...(config.audience === undefined ? {} : { audience: config.audience }),
        ...(config.scope === undefined ? {} : { scope: config.scope }),
        ...(config.clientAuth === undefined ? {} : { clientAuth: config.clientAuth }),
        ...(deps.clock === undefined ? {} : { clock: deps.clock }),
        ...(deps.dispatcher === undefined ? {} : { dispatcher: deps.dispatcher }),
        ...(deps.logger === undefined ? {} : { logger: deps.logger }),
      });
    default:
      throw new AuthError(
        'AUTH_CONFIG_INVALID',
        `Unknown auth type "${String((config as { type?: unknown }).type)}": use none, static, file or oauth2.`,
      );
  }
}

/** The config with its secrets replaced, for logs and `config print`-style output. */
export function redactAuthConfig(config: AuthConfig): Record<string, unknown> {
  switch (config.type) {
    case 'static':
      return { ...config, token: REDACTED };
    case 'oauth2':
      return { ...config, tokenUrl: redactUrl(config.tokenUrl), clientSecret: REDACTED };
    default:
      return { ...config };
  }
}
