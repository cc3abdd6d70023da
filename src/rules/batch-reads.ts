import type { CelProgram } from './cel/cel-program.js';
import { EVERY_ITEM, type Operand, type ReadPath } from './cel/read-paths.js';

/**
 * In the `then` of a rule with `forEach.batch`, `contracts` is a list of what `contract` is in
 * its `when`. So a read of an item, `contracts[0].view.amount` or `c.view.amount` in
 * `contracts.map(c, …)` (both `contracts` → EVERY_ITEM → `view` → `amount`), is a read of
 * `contract.view.amount`. Rewritten so, the reads are checked against the trigger's types like
 * `contract`'s, and each contract of a batch gets the Optional fields they read filled in
 * (field-reads.ts), as `contract` does.
 */
export function asContractReads(program: CelProgram): CelProgram {
  return {
    source: program.source,
    reads: Object.freeze(program.reads.map(itemRead)),
    numberOperands: Object.freeze(
      program.numberOperands.map((o) => ({ ...o, path: itemRead(o.path) })),
    ),
    comparisons: Object.freeze(
      program.comparisons.map((c) => ({
        ...c,
        left: itemOperand(c.left),
        right: itemOperand(c.right),
      })),
    ),
    guards: Object.freeze(program.guards.map((g) => ({ ...g, path: itemRead(g.path) }))),
    // Over `contracts`, a list: never a guard of a rule's trigger (rule-index.ts).
    equalities: Object.freeze([]),
    result: itemOperand(program.result),
    evaluate: (variables) => program.evaluate(variables),
  };
}

/** `contracts[i].rest` as `contract.rest`; any other path as it is. */
function itemRead(path: ReadPath): ReadPath {
  if (path.variable !== 'contracts' || path.segments[0]?.name !== EVERY_ITEM) return path;
  return { variable: 'contract', segments: path.segments.slice(1) };
}

function itemOperand(operand: Operand): Operand {
  return operand.kind === 'path' ? { kind: 'path', path: itemRead(operand.path) } : operand;
}
