import type { StartPosition } from './config/bot-config.js';
import { RuntimeError } from './runtime-error.js';

/** Where the updates stream of a starting bot begins, and why. */
export type StartDecision = {
  /** The stream begins after this offset (exclusive). */
  readonly offset: number;
  /**
   * `checkpoint`: resumed from the stored checkpoint. `start`: the config's `start:` (no
   * checkpoint yet). `reset`: the config's `start:`, the stored checkpoint deliberately ignored.
   */
  readonly from: 'checkpoint' | 'start' | 'reset';
  /** The stored checkpoint it had, when it had one. */
  readonly previous: number | undefined;
};

/**
 * `start:` says where a bot WITHOUT a checkpoint begins; a bot with a checkpoint always resumes
 * from it (so a restart neither replays the ledger nor skips events), unless `reset` (the
 * `run --reset-checkpoint` flag) says to begin at `start:` again.
 *
 * - `ledger-end` (and its older name `checkpoint`): the ledger end read at start;
 * - `begin`: offset 0, the whole ledger;
 * - an offset: after it; one beyond the ledger end is refused (another participant's offset, or
 *   a typo), since the stream would wait for offsets that may never come.
 */
export function startOffsetOf(
  start: StartPosition,
  checkpoint: number | undefined,
  ledgerEnd: number,
  reset = false,
): StartDecision {
  if (checkpoint !== undefined && !reset) {
    // The stream would wait for offsets this participant has not reached, and the Ledger API
    // refuses it (OFFSET_AFTER_LEDGER_END) on every reconnect: say so once, with the way out.
    if (checkpoint > ledgerEnd) {
      throw new RuntimeError(
        'CHECKPOINT_BEYOND_LEDGER_END',
        `the stored checkpoint ${checkpoint} is beyond the participant's ledger end ${ledgerEnd}: the state directory belongs to another ledger, or this one was reset. Point state.dir at this ledger's state, or begin at start: again with run --reset-checkpoint`,
      );
    }
    return { offset: checkpoint, from: 'checkpoint', previous: checkpoint };
  }
  const from = checkpoint === undefined ? 'start' : 'reset';
  switch (start.kind) {
    case 'checkpoint':
    case 'ledger-end':
      return { offset: ledgerEnd, from, previous: checkpoint };
    case 'begin':
      return { offset: 0, from, previous: checkpoint };
    case 'offset':
      if (start.offset > ledgerEnd) {
        throw new RuntimeError(
          'START_BEYOND_LEDGER_END',
          `start: ${start.offset} is beyond the participant's ledger end ${ledgerEnd}: is it an offset of this participant? Use ledger-end, begin or an offset up to ${ledgerEnd}`,
        );
      }
      return { offset: start.offset, from, previous: checkpoint };
  }
}
