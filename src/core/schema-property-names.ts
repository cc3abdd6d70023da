/** The keys a JSON Schema object lists under `properties` (e.g. ajv's `parentSchema`), or none. */
export function schemaPropertyNames(schema: unknown): string[] {
  const props = (schema as { properties?: Readonly<Record<string, unknown>> } | undefined)
    ?.properties;
  return props === undefined ? [] : Object.keys(props);
}
