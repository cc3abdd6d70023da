const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping (key: value lines)',
  array: 'a list',
};

/** A JSON Schema `type` (one or a list, as in ajv's `params.type`) in words for YAML authors. */
export function ajvTypeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}
