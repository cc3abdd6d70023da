import type { SlotIntentView } from '../../runtime/intent-view.js';

/** What run-slot prints of an intent: the same for a local run and one in the bot. */
export function formatSlotIntent(intent: SlotIntentView): string {
  const contract = intent.contractId === null ? '' : ` contract ${intent.contractId}`;
  return `intent ${intent.commandId}${contract}\n  ${JSON.stringify(intent.command)}\n  actAs ${intent.actAs.join(', ')}, dedup from offset ${intent.offset}\n`;
}
