import type { Logger } from '../../core/logger.js';
import { createAuthProvider } from '../../ledger/auth/create-auth-provider.js';
import { LedgerClient } from '../../ledger/ledger-client.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { Sandbox } from '../../sandbox/start-sandbox.js';
import type { PackageFileReader } from './read-package-files.js';

export type ConfigLedger = {
  readonly client: LedgerClient;
  /** The config's party aliases, plus the ones an embedded sandbox allocated. */
  readonly parties: Readonly<Record<string, string>>;
  /** The embedded sandbox started for this process, if the config asks for one. */
  readonly sandbox: Sandbox | undefined;
  /** Closes the client and the auth provider, and stops the embedded sandbox. */
  close(): Promise<void>;
};

/**
 * Connects to the participant a bot config names: with its auth provider and TLS, or by starting
 * the embedded sandbox (aliases allocated, a user that can act as them). The one place `run`,
 * `demo`, `schedule` and `run-slot` get their ledger from.
 */
export async function openConfigLedger(
  config: BotConfig,
  logger?: Logger,
  options: {
    /** The reader of the config's package files so far (BotCatalogue.packageFiles). */
    readonly packageFiles?: PackageFileReader;
  } = {},
): Promise<ConfigLedger> {
  const endpoint = config.ledger.endpoint;
  const child = (component: string): { logger?: Logger } =>
    logger === undefined ? {} : { logger: logger.child({ component }) };
  if (endpoint.kind === 'url') {
    const auth = createAuthProvider(config.ledger.auth, child('auth'));
    return openOver(
      () => auth.close(),
      async () => ({
        client: await LedgerClient.create({
          url: endpoint.url,
          auth,
          pingIntervalMs: config.ledger.pingIntervalMs,
          ...(config.ledger.tls === undefined ? {} : { tls: config.ledger.tls }),
          ...child('ledger'),
        }),
        parties: config.parties,
        sandbox: undefined,
      }),
    );
  }
  // Loaded only here: a bot against a participant does not load the sandbox (nor its DAR
  // writer, auth and HTTP server), a measurable part of its start.
  const [{ startSandbox }, { sandboxDarsOf }] = await Promise.all([
    import('../../sandbox/start-sandbox.js'),
    import('./sandbox-dars.js'),
  ]);
  const sandbox = await startSandbox({
    dars: await sandboxDarsOf(config.ledger.packages, options.packageFiles),
    models: endpoint.models,
    parties: endpoint.parties,
    users: [{ id: config.ledger.userId, actAs: endpoint.parties }],
    ...child('sandbox'),
  });
  return openOver(
    () => sandbox.stop(),
    async () => {
      const client = await LedgerClient.create({
        url: sandbox.url,
        pingIntervalMs: config.ledger.pingIntervalMs,
        ...child('ledger'),
      });
      const parties = { ...config.parties };
      for (const alias of endpoint.parties) {
        const id = sandbox.parties[alias];
        if (id !== undefined) parties[alias] = id;
      }
      logger?.info(
        { url: sandbox.url, participantId: sandbox.participantId, parties },
        'embedded sandbox ready',
      );
      return { client, parties, sandbox };
    },
  );
}

/**
 * Opens the client on top of what it needs (the auth provider, the embedded sandbox): closing
 * the result closes the client, then releases that; a failed open releases it at once.
 */
async function openOver(
  release: () => Promise<void>,
  open: () => Promise<Omit<ConfigLedger, 'close'>>,
): Promise<ConfigLedger> {
  try {
    const opened = await open();
    return {
      ...opened,
      close: async () => {
        await opened.client.close();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}
