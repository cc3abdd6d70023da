import type { ActiveContractsMode, ActiveContractsOptions } from '../ledger/active-contracts.js';
import { eventFormat } from '../ledger/filters.js';
import type { CallOptions } from '../ledger/http-transport.js';
import type { ListActiveContractsRequest } from '../ledger/ledger-client.js';
import type { JsGetActiveContractsResponse } from '../ledger/wire/wire-types.js';
import type { SlotSnapshotSource } from '../schedule/run-slot.js';

/** What a schedule slot reads of the ledger: a structural subset of LedgerClient. */
export type SlotLedger = {
  ledgerEnd(options?: CallOptions): Promise<number>;
  activeContracts(
    request: ListActiveContractsRequest,
    options?: ActiveContractsOptions,
  ): AsyncIterable<JsGetActiveContractsResponse>;
};

export type LedgerSlotSourceOptions = {
  /** How to read the snapshot (default `websocket`, the one way beyond 200 contracts on 3.4). */
  readonly mode?: ActiveContractsMode;
  /** Elements per HTTP call in `list` and `page` modes. */
  readonly pageSize?: number;
};

/**
 * The snapshot reads of a schedule slot on the JSON Ledger API: the ledger end, and the active
 * contracts of one template (or of every template implementing one interface, with their
 * interface views) for one party at an offset, streamed page by page (or over the websocket), so
 * a slot over 100,000 contracts holds one page at a time.
 */
export function ledgerSlotSource(
  ledger: SlotLedger,
  options: LedgerSlotSourceOptions = {},
): SlotSnapshotSource {
  return {
    ledgerEnd: (signal) => ledger.ledgerEnd(signal === undefined ? {} : { signal }),
    async *activeContracts(query, signal) {
      const stream = ledger.activeContracts(
        {
          activeAtOffset: query.offset,
          // An interface: an InterfaceFilter, which sends each contract's view of it.
          eventFormat: eventFormat(
            query.refKind === 'interface'
              ? { parties: [query.party], interfaces: [query.template.text] }
              : { parties: [query.party], templates: [query.template.text] },
          ),
        },
        {
          ...(options.mode === undefined ? {} : { mode: options.mode }),
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          ...(signal === undefined ? {} : { signal }),
        },
      );
      for await (const element of stream) {
        const entry = element.contractEntry;
        // Incomplete (re)assignments are contracts moving between synchronizers; they show up
        // as active once assigned, in a later slot.
        if (entry !== undefined && 'JsActiveContract' in entry) {
          yield entry.JsActiveContract.createdEvent;
        }
      }
    },
  };
}
