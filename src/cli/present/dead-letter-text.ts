import type { DeadLetterView } from '../../runtime/intent-view.js';
import { formatTable } from './format-table.js';
import { indentJson } from './would-submit.js';

/** The `list` table, one dead letter a row. */
export function formatDeadLetterTable(list: readonly DeadLetterView[]): string {
  return formatTable(
    ['DEAD-LETTERED AT', 'RULE', 'ATTEMPTS', 'OFFSET', 'COMMAND ID', 'ERROR'],
    list.map((d) => [
      d.deadLetteredAt,
      d.ruleId,
      String(d.attempts),
      String(d.offset),
      d.commandId,
      errorText(d.error),
    ]),
  );
}

/** `configArg`: the --config value as given, so the printed commands work when pasted. */
export function formatDeadLetter(d: DeadLetterView, where: string, configArg: string): string {
  const lines = [
    `dead letter ${d.commandId} (${where})`,
    `  rule        ${d.ruleId} (revision ${d.revision})`,
    `  actAs       ${d.actAs.join(', ')}`,
    `  trigger     ${JSON.stringify(d.trigger)} at offset ${d.offset}`,
    `  attempts    ${d.attempts}`,
    `  since       ${d.deadLetteredAt}`,
    `  error       ${errorText(d.error)}`,
    '  error (full):',
    indentJson(d.error, 4),
  ];
  if (d.payload !== undefined)
    lines.push('  payload (what is submitted again on retry):', indentJson(d.payload, 4));
  if (d.event !== undefined) lines.push('  triggering event:', indentJson(d.event, 4));
  const config = `--config ${shellWord(configArg)}`;
  const id = shellWord(d.commandId);
  lines.push(
    `retry: ledgerbot dead-letters retry ${id} ${config}`,
    `drop:  ledgerbot dead-letters drop ${id} ${config}`,
  );
  return `${lines.join('\n')}\n`;
}

/** `text` as one word for a POSIX shell: as it is when that is safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function errorText(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown; reason?: unknown } | null;
  if (e === null || typeof e !== 'object') return String(error);
  const code = typeof e.code === 'string' ? e.code : '';
  const reason = typeof e.reason === 'string' ? ` [${e.reason}]` : '';
  const message = typeof e.message === 'string' ? `: ${e.message}` : '';
  return `${code}${reason}${message}`.slice(0, 200);
}
