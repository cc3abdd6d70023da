/**
 * Builders for completion `status` samples as Canton sends them (NOTES.md §5.1): each detail is a
 * ProtoAny whose `value` is the base64 protobuf and whose `valueDecoded` is the decoded object.
 * The spec types `valueDecoded` as a string, so `specForm` strips it to get a spec-valid sample.
 */
type Detail = {
  typeUrl: string;
  value: string;
  unknownFields: { fields: object };
  valueDecoded?: unknown;
};

function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v === 0n ? b : b | 0x80);
  } while (v !== 0n);
  return out;
}

function bytesField(no: number, bytes: Buffer | string): Buffer {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  return Buffer.concat([
    Buffer.from(varint(BigInt((no << 3) | 2))),
    Buffer.from(varint(BigInt(b.length))),
    b,
  ]);
}

function varintField(no: number, n: number): Buffer {
  return Buffer.from([...varint(BigInt(no << 3)), ...varint(BigInt(n))]);
}

function any(type: string, proto: Buffer, decoded: unknown): Detail {
  return {
    typeUrl: `type.googleapis.com/google.rpc.${type}`,
    value: proto.toString('base64'),
    unknownFields: { fields: {} },
    valueDecoded: decoded,
  };
}

export function errorInfo(reason: string, metadata: Record<string, string>): Detail {
  const proto = Buffer.concat([
    bytesField(1, reason),
    ...Object.entries(metadata).map(([k, v]) =>
      bytesField(3, Buffer.concat([bytesField(1, k), bytesField(2, v)])),
    ),
  ]);
  return any('ErrorInfo', proto, { reason, metadata });
}

export function retryInfo(seconds: number, nanos = 0): Detail {
  const duration = Buffer.concat([
    seconds === 0 ? Buffer.alloc(0) : varintField(1, seconds),
    nanos === 0 ? Buffer.alloc(0) : varintField(2, nanos),
  ]);
  return any('RetryInfo', bytesField(1, duration), { retryDelay: { seconds, nanos } });
}

export function resourceInfo(resourceType: string, resourceName: string): Detail {
  const proto = Buffer.concat([bytesField(1, resourceType), bytesField(2, resourceName)]);
  return any('ResourceInfo', proto, { resourceType, resourceName, owner: '', description: '' });
}

export function requestInfo(requestId: string): Detail {
  return any('RequestInfo', bytesField(1, requestId), { requestId, servingData: '' });
}

export type Status = { code: number; message: string; details: Detail[] };

/** A failed status as Canton sends it: message prefix, ErrorInfo, RequestInfo and more. */
export function cantonStatus(opts: {
  code: string;
  category: number;
  grpc: number;
  cause: string;
  correlationId?: string;
  definiteAnswer?: boolean;
  extraContext?: Record<string, string>;
  extraDetails?: Detail[];
}): Status {
  const corr = opts.correlationId ?? '3f0c9a1e-5c8b-4d7e-9a61-2b8d0c4e7f11';
  return {
    code: opts.grpc,
    message: `${opts.code}(${opts.category},${corr.slice(0, 8)}): ${opts.cause}`,
    details: [
      errorInfo(opts.code, {
        category: String(opts.category),
        definite_answer: String(opts.definiteAnswer ?? false),
        participant: 'participant1',
        tid: '99e67812af315256ef9a02a9fdb94646',
        ...opts.extraContext,
      }),
      requestInfo(corr),
      ...(opts.extraDetails ?? []),
    ],
  };
}

/** The same status as the spec can express it: `valueDecoded` (typed string there) dropped. */
export function specForm(status: Status): Status {
  return {
    ...status,
    details: status.details.map(({ valueDecoded: _drop, ...rest }) => rest),
  };
}

/** A spec-valid Completion1 around a status. */
export function completion(status: Status | undefined, overrides: Record<string, unknown> = {}) {
  return {
    commandId: 'lb-accept-small-invoices-0c1d2e3f',
    userId: 'ledgerbot',
    actAs: ['payer::1220abcd'],
    submissionId: '6a1f5b0e-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
    offset: 42,
    synchronizerTime: { synchronizerId: 'sync::1220ef', recordTime: '2026-01-01T00:00:00Z' },
    deduplicationPeriod: { DeduplicationOffset: { value: 41 } },
    traceContext: { traceparent: '00-99e67812af315256ef9a02a9fdb94646-0123456789abcdef-01' },
    updateId: '',
    ...(status === undefined ? {} : { status }),
    ...overrides,
  };
}
