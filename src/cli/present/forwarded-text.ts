/**
 * What the CLI says when a fleet member answered `202 { forwarded }`: the member does not run
 * the rule, so it posted the action for the rule's owner (`owner` null: nobody holds the rule
 * right now), which carries it out at its next round.
 */
export function formatForwarded(action: string, owner: string | null, where: string): string {
  const to = owner ?? 'nobody holds the rule right now: whoever takes it';
  return `${action} forwarded ${where} to the rule's owner (${to}), which carries it out at its next round\n`;
}
