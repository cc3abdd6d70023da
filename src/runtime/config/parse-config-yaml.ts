import { LineCounter, parseDocument } from 'yaml';
import { YamlLocator } from '../../core/yaml-locator.js';
import { guardRuleText, textPos } from '../../rules/guard-rule-text.js';
import type { ConfigProblemList } from './config-problem-list.js';

/** Config files are a few KB; anything this large is the wrong file. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Guards and parses a config file's YAML. Adds its problems (size, nesting, syntax, aliases)
 * and returns undefined when there is one.
 */
export function parseConfigYaml(
  file: string,
  text: string,
  problems: ConfigProblemList,
): { value: unknown; at: YamlLocator } | undefined {
  // Hostile nesting would exhaust the YAML parser's stack: the rule files' guard runs first.
  const guard = guardRuleText(text, MAX_CONFIG_BYTES);
  if (guard !== null) {
    problems.add(
      textPos(text, guard.offset),
      [],
      'YAML_TOO_COMPLEX',
      guard.code === 'FILE_TOO_LARGE'
        ? `the config file is too large: ${guard.reason}`
        : `YAML too complex for a config file: ${guard.reason}`,
    );
    return undefined;
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = new YamlLocator(file, text, doc, lines);
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      // Only the first line: the rest is a code frame that could show a secret.
      const message = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      problems.add(at.at(e.pos[0]), [], 'YAML_SYNTAX', `YAML syntax: ${message}`);
    }
    return undefined;
  }
  try {
    return { value: doc.toJS({ maxAliasCount: 100 }), at };
  } catch (error) {
    problems.add(at.pos([]), [], 'YAML_SYNTAX', `YAML: ${(error as Error).message}`);
    return undefined;
  }
}
