import type { Event } from '../../src/ledger/wire/wire-types.js';
import { archived, created, exercised, PARTIES, PKG_V1, PKG_V2 } from './rule-fixtures.js';

/**
 * `count` wire events drawn from `seed` (the same every run): created, exercised and archived
 * events of the bench templates in two packages, witnessed by some of the parties, with field
 * values that make the bench rules match, fail their conditions, fail their guards or err.
 */
export function randomEvents(seed: number, count: number): Event[] {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const witnesses = (): string[] =>
    [PARTIES.payer, PARTIES.issuer, PARTIES.auditor].filter(() => next() < 0.6);
  const events: Event[] = [];
  for (let i = 0; i < count; i++) {
    const templateId = `${pick([PKG_V1, PKG_V2])}:${pick(['Invoice:Invoice', 'Payment:Payment', 'Payment:Receipt'])}`;
    const packageName = pick(['invoices', 'other']);
    const shape = next();
    events.push(
      shape < 0.5
        ? {
            CreatedEvent: created({
              templateId,
              packageName,
              witnessParties: witnesses(),
              createArgument: {
                issuer: PARTIES.issuer,
                payer: pick([PARTIES.payer, PARTIES.issuer]),
                amount: pick(['5', '999.99', '1940', '3000', 'x', '60']),
                currency: pick(['USD', 'EUR', 'CHF', 'GBP']),
                due: pick(['2026-01-13', '2026-02-11', 'soon']),
                reference: pick(['INV-17', 'INV-007', 'INV-0', 'INV-1']),
              },
            }),
          }
        : shape < 0.85
          ? {
              ExercisedEvent: exercised({
                templateId,
                packageName,
                witnessParties: witnesses(),
                choice: pick(['Accept', 'Remind', 'Cancel', 'Settle']),
                consuming: next() < 0.5,
                choiceArgument: { note: pick([null, 'note 16', 'note 26']) },
                exerciseResult: pick(['00ab', '00a7', '00c1']),
              }),
            }
          : { ArchivedEvent: archived({ templateId, packageName, witnessParties: witnesses() }) },
    );
  }
  return events;
}
