import type { ConfigCheckContext } from './config-problem-list.js';
import type { RawBotConfig } from './raw-bot-config.js';

/**
 * `state.postgres.url` names a PostgreSQL server: `postgres://` or `postgresql://`, as libpq and
 * node-postgres spell it. node-postgres reads any other scheme (`http://…`) as one anyway, so a
 * typo would connect, or fail later with a misleading error. Only the scheme is ever quoted: the
 * URL holds the password.
 */
export function checkStatePostgres(raw: RawBotConfig, { at, problems }: ConfigCheckContext): void {
  const url = raw.state.postgres?.url;
  if (url === undefined || /^postgres(ql)?:\/\//i.test(url)) return;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1];
  problems.add(
    at.pos(['state', 'postgres', 'url']),
    ['state', 'postgres', 'url'],
    'BAD_URL',
    `\`state.postgres.url\` must start with postgres:// or postgresql://${scheme === undefined ? '' : `, not ${scheme}://`}`,
    'write the database URL, e.g. postgres://user:password@host:5432/database (from the environment: ${LEDGERBOT_PG_URL})',
  );
}
