import type { Logger } from '../core/logger.js';
import { createAuthProvider } from '../ledger/auth/create-auth-provider.js';
import { LedgerClient } from '../ledger/ledger-client.js';
import type { BotConfig } from '../runtime/config/bot-config.js';
import { startSandbox } from '../sandbox/start-sandbox.js';

export type ConfigLedger = {
  readonly client: LedgerClient;
  /** The config's party aliases, plus the ones an embedded sandbox allocated. */
  readonly parties: Readonly<Record<string, string>>;
  /** Whether the ledger is an embedded sandbox started for this process (empty at start). */
  readonly embedded: boolean;
  /** Closes the client, and stops the embedded sandbox. */
  close(): Promise<void>;
};

/** Connects to the participant a bot config names, starting the embedded sandbox if it says so. */
export async function openConfigLedger(config: BotConfig, logger?: Logger): Promise<ConfigLedger> {
  const endpoint = config.ledger.endpoint;
  const withLogger = logger === undefined ? {} : { logger };
  if (endpoint.kind === 'url') {
    const client = await LedgerClient.create({
      url: endpoint.url,
      auth: createAuthProvider(config.ledger.auth, withLogger),
      ...(config.ledger.tls === undefined ? {} : { tls: config.ledger.tls }),
      ...withLogger,
    });
    return { client, parties: config.parties, embedded: false, close: () => client.close() };
  }
  const sandbox = await startSandbox({
    models: endpoint.models,
    parties: endpoint.parties,
    users: [{ id: config.ledger.userId, actAs: endpoint.parties }],
  });
  try {
    const client = await LedgerClient.create({ url: sandbox.url, ...withLogger });
    return {
      client,
      parties: { ...config.parties, ...sandbox.parties },
      embedded: true,
      close: async () => {
        await client.close();
        await sandbox.stop();
      },
    };
  } catch (error) {
    await sandbox.stop();
    throw error;
  }
}
