import type { Completion, JsTransaction } from '../../ledger/wire/wire-types.js';
import { completionWithNulls, transactionWithNulls } from './canton-nulls.js';

/** Java's Instant.toString: ISO-8601 UTC, no fraction when it is zero (NOTES.md §0.7). */
export function instantString(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, -5) + 'Z' : iso;
}

/** A JsTransaction as Canton prints it (absent optionals as null). */
export function transactionJson(tx: JsTransaction): string {
  return JSON.stringify(transactionWithNulls(tx));
}

export function transactionUpdate(tx: JsTransaction): string {
  return `{"update":{"Transaction":{"value":${transactionJson(tx)}}}}`;
}

function checkpointValue(offset: number, synchronizerId: string, recordTime: string): string {
  return `{"offset":${offset},"synchronizerTimes":[{"synchronizerId":${JSON.stringify(synchronizerId)},"recordTime":"${recordTime}"}]}`;
}

export function updateCheckpoint(offset: number, synchronizerId: string, nowMs: number): string {
  return `{"update":{"OffsetCheckpoint":{"value":${checkpointValue(offset, synchronizerId, instantString(nowMs))}}}}`;
}

export function completionCheckpoint(
  offset: number,
  synchronizerId: string,
  nowMs: number,
): string {
  return `{"completionResponse":{"OffsetCheckpoint":{"value":${checkpointValue(offset, synchronizerId, instantString(nowMs))}}}}`;
}

export function completionFrame(completion: Completion): string {
  return `{"completionResponse":{"Completion":{"value":${JSON.stringify(completionWithNulls(completion))}}}}`;
}
