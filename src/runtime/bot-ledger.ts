import type { LedgerClient } from '../ledger/ledger-client.js';

/**
 * What the runtime uses of the ledger: the LedgerClient methods below. Tests pass a scripted
 * fake of the same shape; production passes the LedgerClient itself.
 */
export type BotLedger = Pick<
  LedgerClient,
  'submit' | 'ledgerEnd' | 'updates' | 'completions' | 'eventsByContractId' | 'latestPrunedOffsets'
>;
