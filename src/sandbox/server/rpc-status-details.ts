/**
 * The google.rpc error details Canton attaches to a rejected completion's status (NOTES.md §5.1),
 * encoded as real protobuf so a client that decodes `ProtoAny.value` sees what Canton sends.
 * `valueDecoded` is left out: Canton renders it as an object although the spec types it as a string.
 */
export type ProtoAny = {
  readonly typeUrl: string;
  readonly value: string;
  readonly unknownFields: { readonly fields: Record<string, never> };
};

function varint(n: number): number[] {
  const out: number[] = [];
  let v = Math.floor(n);
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function lengthDelimited(field: number, bytes: readonly number[]): number[] {
  return [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
}

function stringField(field: number, text: string): number[] {
  return text.length === 0 ? [] : lengthDelimited(field, [...Buffer.from(text, 'utf8')]);
}

function varintField(field: number, n: number): number[] {
  return n === 0 ? [] : [...varint(field << 3), ...varint(n)];
}

function any(type: string, bytes: readonly number[]): ProtoAny {
  return {
    typeUrl: `type.googleapis.com/google.rpc.${type}`,
    value: Buffer.from(bytes).toString('base64'),
    unknownFields: { fields: {} },
  };
}

export function errorInfo(reason: string, metadata: Readonly<Record<string, string>>): ProtoAny {
  const bytes = [...stringField(1, reason)];
  for (const [k, v] of Object.entries(metadata)) {
    bytes.push(...lengthDelimited(3, [...stringField(1, k), ...stringField(2, v)]));
  }
  return any('ErrorInfo', bytes);
}

export function requestInfo(requestId: string): ProtoAny {
  return any('RequestInfo', stringField(1, requestId));
}

export function retryInfo(seconds: number): ProtoAny {
  return any('RetryInfo', lengthDelimited(1, varintField(1, seconds)));
}

export function resourceInfo(type: string, name: string): ProtoAny {
  return any('ResourceInfo', [...stringField(1, type), ...stringField(2, name)]);
}
