import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { createHash } from 'node:crypto';
import {
  ArchivePayloadSchema,
  ArchiveSchema,
  HashFunction,
} from '../../src/daml-lf/generated/daml_lf_pb.js';
import {
  PackageSchema,
  TypeSchema,
  type Package,
} from '../../src/daml-lf/generated/daml_lf2_pb.js';

/**
 * Hostile and broken input for the reader's tests, made with the generated protobuf code and by
 * patching zip headers: what a user's file or a participant could hand it.
 */

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** An `Archive` of this payload, its hash field `hash` (by default the right one). */
export function archiveOf(payload: Uint8Array, hash = sha256(payload)): Uint8Array {
  return toBinary(
    ArchiveSchema,
    create(ArchiveSchema, { hashFunction: HashFunction.SHA256, payload, hash }),
  );
}

/** The payload of a Daml-LF 2 package built from `init`. */
export function lf2Payload(init: MessageInitShape<typeof PackageSchema>, minor = '1'): Uint8Array {
  return toBinary(
    ArchivePayloadSchema,
    create(ArchivePayloadSchema, {
      minor,
      Sum: { case: 'damlLf2', value: toBinary(PackageSchema, create(PackageSchema, init)) },
    }),
  );
}

/** The payload of a Daml-LF 1 package (Canton 2.x); its content is not looked at. */
export function lf1Payload(minor: string): Uint8Array {
  return toBinary(
    ArchivePayloadSchema,
    create(ArchivePayloadSchema, { minor, Sum: { case: 'damlLf1', value: new Uint8Array(8) } }),
  );
}

/** One encoded `Type`, for `interned_types`. */
export function typeBytes(init: MessageInitShape<typeof TypeSchema>): Uint8Array {
  return toBinary(TypeSchema, create(TypeSchema, init));
}

/**
 * A package `P 1.0.0` with one module `M` holding one record `R` whose field `f` has type
 * `interned_types[fieldType]` (or the inline type given), the interned types as given.
 */
export function packageWithField(
  fieldType: number | MessageInitShape<typeof TypeSchema>,
  internedTypes: Uint8Array[] = [],
): Package {
  return create(PackageSchema, {
    internedStrings: ['P', '1.0.0', 'M', 'R', 'f'],
    internedDottedNames: [{ segmentsInternedStr: [2] }, { segmentsInternedStr: [3] }],
    metadata: { nameInternedStr: 0, versionInternedStr: 1 },
    internedTypes,
    modules: [
      {
        nameInternedDname: 0,
        dataTypes: [
          {
            nameInternedDname: 1,
            serializable: true,
            DataCons: {
              case: 'record',
              value: {
                fields: [
                  {
                    fieldInternedStr: 4,
                    type:
                      typeof fieldType === 'number'
                        ? { Sum: { case: 'internedType', value: fieldType } }
                        : fieldType,
                  },
                ],
              },
            },
          },
        ],
      },
    ],
  });
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;

/**
 * A copy of a zip (as fflate writes it: no zip64, no data descriptors) with the headers of entry
 * `name`, local and central, patched: its declared inflated size, compression method or name
 * (a new name of the same length).
 */
export function patchZipEntry(
  zip: Uint8Array,
  name: string,
  patch: { uncompressedSize?: number; method?: number; name?: string },
): Uint8Array {
  const out = Buffer.from(zip);
  let patched = 0;
  for (let at = 0; at + 46 <= out.length; at++) {
    const sig = out.readUInt32LE(at);
    if (sig !== LOCAL && sig !== CENTRAL) continue;
    const local = sig === LOCAL;
    const nameLength = out.readUInt16LE(at + (local ? 26 : 28));
    const nameAt = at + (local ? 30 : 46);
    if (out.toString('latin1', nameAt, nameAt + nameLength) !== name) continue;
    if (patch.method !== undefined) out.writeUInt16LE(patch.method, at + (local ? 8 : 10));
    if (patch.uncompressedSize !== undefined) {
      out.writeUInt32LE(patch.uncompressedSize, at + (local ? 22 : 24));
    }
    if (patch.name !== undefined) {
      if (patch.name.length !== nameLength) throw new Error('a new name must be as long');
      out.write(patch.name, nameAt, 'latin1');
    }
    patched++;
  }
  if (patched !== 2) throw new Error(`patched ${patched} headers of ${name}, expected 2`);
  return out;
}

/**
 * A `Type` nested `levels` deep (`List (List (… Text))`), written with the protobuf library's
 * writer level by level: building it as one message would overflow the stack of the encoder
 * before the reader ever saw it.
 */
export function deepTypeBytes(levels: number): Uint8Array {
  const LEN = WireType.LengthDelimited;
  const builtin = (b: number, arg?: Uint8Array): Uint8Array => {
    const w = new BinaryWriter().tag(1, WireType.Varint).int32(b);
    if (arg !== undefined) w.tag(2, LEN).bytes(arg);
    return new BinaryWriter().tag(3, LEN).bytes(w.finish()).finish();
  };
  let bytes = builtin(7);
  for (let i = 0; i < levels; i++) bytes = builtin(10, bytes);
  return bytes;
}

/**
 * The payload of `packageWithField(0)` with its one field's type inline and `levels` deep: the
 * module written with the library's writer and appended to the package (protobuf merges a
 * repeated field's occurrences), so the nesting is in what the reader decodes first.
 */
export function deepPackagePayload(levels: number): Uint8Array {
  const LEN = WireType.LengthDelimited;
  const rest = packageWithField(0);
  rest.modules = [];
  const field = new BinaryWriter()
    .tag(3, WireType.Varint)
    .int32(4)
    .tag(2, LEN)
    .bytes(deepTypeBytes(levels))
    .finish();
  const fields = new BinaryWriter().tag(1, LEN).bytes(field).finish();
  const dataType = new BinaryWriter()
    .tag(2, WireType.Varint)
    .int32(1)
    .tag(5, LEN)
    .bytes(fields)
    .finish();
  const module = new BinaryWriter().tag(4, LEN).bytes(dataType).finish();
  const pkg = Buffer.concat([
    toBinary(PackageSchema, rest),
    new BinaryWriter().tag(1, LEN).bytes(module).finish(),
  ]);
  return toBinary(
    ArchivePayloadSchema,
    create(ArchivePayloadSchema, { minor: '1', Sum: { case: 'damlLf2', value: pkg } }),
  );
}
