import { LedgerUsageError } from './ledger-usage-error.js';
import type {
  CumulativeFilter,
  EventFormat,
  Filters,
  TopologyFormat,
  TransactionFormat,
  UpdateFormat,
} from './wire/wire-types.js';

export type TransactionShape = 'TRANSACTION_SHAPE_ACS_DELTA' | 'TRANSACTION_SHAPE_LEDGER_EFFECTS';

export type EventFormatOptions = {
  /** Parties whose events to read (each gets the same filters). */
  readonly parties: readonly string[];
  /** Also read for every party on the participant (`filtersForAnyParty`; needs CanReadAsAnyParty). */
  readonly anyParty?: boolean;
  /** Template ids, `#package-name:Module:Entity` or `packageId:Module:Entity`, passed through. */
  readonly templates?: readonly string[];
  /** Interface ids, in the same forms as templates. */
  readonly interfaces?: readonly string[];
  /** Default true: interface filters render the interface view. */
  readonly includeInterfaceView?: boolean;
  /** Default false. Needed to pass contracts on as disclosed contracts. */
  readonly includeCreatedEventBlob?: boolean;
  /** Default true: record fields carry labels. */
  readonly verbose?: boolean;
};

/**
 * The EventFormat of NOTES.md §7. Without templates or interfaces it is a wildcard over all
 * templates; otherwise one cumulative filter per template and interface.
 */
export function eventFormat(options: EventFormatOptions): EventFormat {
  const anyParty = options.anyParty ?? false;
  if (options.parties.length === 0 && !anyParty) {
    throw new LedgerUsageError('An event format needs at least one party, or anyParty: true.');
  }
  const blob = options.includeCreatedEventBlob ?? false;
  const templates = options.templates ?? [];
  const interfaces = options.interfaces ?? [];
  for (const id of [...templates, ...interfaces]) {
    if (id.split(':').length !== 3) {
      throw new LedgerUsageError(
        `"${id}" is not a template or interface id; expected #package-name:Module:Entity ` +
          'or packageId:Module:Entity.',
      );
    }
  }
  const cumulative: CumulativeFilter[] = [];
  for (const templateId of templates) {
    cumulative.push({
      identifierFilter: {
        TemplateFilter: { value: { templateId, includeCreatedEventBlob: blob } },
      },
    });
  }
  for (const interfaceId of interfaces) {
    cumulative.push({
      identifierFilter: {
        InterfaceFilter: {
          value: {
            interfaceId,
            includeInterfaceView: options.includeInterfaceView ?? true,
            includeCreatedEventBlob: blob,
          },
        },
      },
    });
  }
  if (cumulative.length === 0) {
    cumulative.push({
      identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: blob } } },
    });
  }
  const filters = (): Filters => ({ cumulative: cumulative.map((c) => structuredClone(c)) });
  const filtersByParty: Record<string, Filters> = {};
  for (const party of options.parties) filtersByParty[party] = filters();
  return {
    filtersByParty,
    ...(anyParty ? { filtersForAnyParty: filters() } : {}),
    verbose: options.verbose ?? true,
  };
}

/** A TransactionFormat; ACS_DELTA (creates and archives) unless told otherwise. */
export function transactionFormat(
  events: EventFormat,
  shape: TransactionShape = 'TRANSACTION_SHAPE_ACS_DELTA',
): TransactionFormat {
  return { eventFormat: events, transactionShape: shape };
}

export type UpdateFormatOptions = {
  readonly transactions?: TransactionFormat;
  /** (Un)assignments, rendered ACS_DELTA-style. */
  readonly reassignments?: EventFormat;
  /** Participant authorization topology events; an empty party list means all parties. */
  readonly topologyParties?: readonly string[];
};

/** An UpdateFormat; at least one kind of update must be asked for. */
export function updateFormat(options: UpdateFormatOptions): UpdateFormat {
  if (
    options.transactions === undefined &&
    options.reassignments === undefined &&
    options.topologyParties === undefined
  ) {
    throw new LedgerUsageError(
      'An update format needs transactions, reassignments or topologyParties.',
    );
  }
  const topology: TopologyFormat | undefined =
    options.topologyParties === undefined
      ? undefined
      : { includeParticipantAuthorizationEvents: { parties: [...options.topologyParties] } };
  return {
    ...(options.transactions === undefined ? {} : { includeTransactions: options.transactions }),
    ...(options.reassignments === undefined ? {} : { includeReassignments: options.reassignments }),
    ...(topology === undefined ? {} : { includeTopologyEvents: topology }),
  };
}
