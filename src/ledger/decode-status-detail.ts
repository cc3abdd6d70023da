/**
 * The google.rpc error details Canton attaches to a failed completion's `status.details`
 * (NOTES.md §5.1). Canton sends each one decoded as `valueDecoded`, but the spec types that field
 * as a string, so when it is not an object we decode the protobuf bytes in `value` (base64) instead.
 */
export type StatusDetail =
  | {
      readonly type: 'ErrorInfo';
      readonly reason: string;
      readonly domain: string;
      readonly metadata: Readonly<Record<string, string>>;
    }
  | { readonly type: 'RetryInfo'; readonly seconds: number; readonly nanos: number }
  | { readonly type: 'ResourceInfo'; readonly resourceType: string; readonly resourceName: string }
  | { readonly type: 'RequestInfo'; readonly requestId: string };

const PREFIX = 'type.googleapis.com/google.rpc.';

export function decodeStatusDetail(any: unknown): StatusDetail | undefined {
  if (any === null || typeof any !== 'object') return undefined;
  const a = any as { typeUrl?: unknown; value?: unknown; valueDecoded?: unknown };
  if (typeof a.typeUrl !== 'string' || !a.typeUrl.startsWith(PREFIX)) return undefined;
  const type = a.typeUrl.slice(PREFIX.length);
  if (a.valueDecoded !== null && typeof a.valueDecoded === 'object') {
    const fromJson = fromDecoded(type, a.valueDecoded as Record<string, unknown>);
    if (fromJson !== undefined) return fromJson;
  }
  if (typeof a.value !== 'string') return undefined;
  try {
    return fromProto(type, Buffer.from(a.value, 'base64'));
  } catch {
    return undefined;
  }
}

function fromDecoded(type: string, v: Record<string, unknown>): StatusDetail | undefined {
  const str = (x: unknown): string => (typeof x === 'string' ? x : '');
  switch (type) {
    case 'ErrorInfo': {
      const metadata: Record<string, string> = {};
      if (v.metadata !== null && typeof v.metadata === 'object') {
        for (const [k, x] of Object.entries(v.metadata as Record<string, unknown>)) {
          if (typeof x === 'string') metadata[k] = x;
        }
      }
      return { type, reason: str(v.reason), domain: str(v.domain), metadata };
    }
    case 'RetryInfo': {
      const d = (v.retryDelay ?? {}) as { seconds?: unknown; nanos?: unknown };
      return { type, seconds: Number(d.seconds ?? 0) || 0, nanos: Number(d.nanos ?? 0) || 0 };
    }
    case 'ResourceInfo':
      return { type, resourceType: str(v.resourceType), resourceName: str(v.resourceName) };
    case 'RequestInfo':
      return { type, requestId: str(v.requestId) };
    default:
      return undefined;
  }
}

type Field = { readonly no: number; readonly varint?: bigint; readonly bytes?: Buffer };

function fromProto(type: string, buf: Buffer): StatusDetail | undefined {
  const fields = readFields(buf);
  const text = (no: number): string => {
    const f = fields.find((x) => x.no === no && x.bytes !== undefined);
    return f?.bytes?.toString('utf8') ?? '';
  };
  switch (type) {
    case 'ErrorInfo': {
      const metadata: Record<string, string> = {};
      for (const f of fields) {
        if (f.no !== 3 || f.bytes === undefined) continue;
        const entry = readFields(f.bytes);
        const key = entry.find((x) => x.no === 1)?.bytes?.toString('utf8');
        const value = entry.find((x) => x.no === 2)?.bytes?.toString('utf8') ?? '';
        if (key !== undefined) metadata[key] = value;
      }
      return { type, reason: text(1), domain: text(2), metadata };
    }
    case 'RetryInfo': {
      const delay = fields.find((x) => x.no === 1)?.bytes;
      const d = delay === undefined ? [] : readFields(delay);
      const seconds = Number(BigInt.asIntN(64, d.find((x) => x.no === 1)?.varint ?? 0n));
      const nanos = Number(BigInt.asIntN(32, d.find((x) => x.no === 2)?.varint ?? 0n));
      return { type, seconds, nanos };
    }
    case 'ResourceInfo':
      return { type, resourceType: text(1), resourceName: text(2) };
    case 'RequestInfo':
      return { type, requestId: text(1) };
    default:
      return undefined;
  }
}

/** A minimal protobuf wire reader: varint and length-delimited fields; fixed widths skipped. */
function readFields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = buf[pos++];
      if (b === undefined) throw new RangeError('truncated varint');
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new RangeError('varint too long');
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    switch (key & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const len = Number(varint());
        if (pos + len > buf.length) throw new RangeError('truncated field');
        out.push({ no, bytes: buf.subarray(pos, pos + len) });
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new RangeError(`unsupported wire type ${key & 7}`);
    }
  }
  return out;
}
