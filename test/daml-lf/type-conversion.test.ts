import { describe, expect, it } from 'vitest';
import type { DamlType } from '../../src/daml-lf/daml-type.js';
import { BuiltinType } from '../../src/daml-lf/generated/daml_lf2_pb.js';
import { readDalf } from '../../src/daml-lf/read-dalf.js';
import { archiveOf, lf2Payload, packageWithField, typeBytes } from './crafted-input.js';
import { errorOf } from './error-of.js';

/**
 * How Daml-LF types become DamlTypes, on packages written with the generated protobuf code: the
 * forms the Daml compiler writes (interned types, `TApp` of LF 2.dev, synonyms, nat arguments)
 * and the ones no ledger value has.
 */

type TypeInit = Parameters<typeof typeBytes>[0];
const interned = (i: number): TypeInit => ({ Sum: { case: 'internedType', value: i } });
const builtin = (b: BuiltinType, ...args: TypeInit[]): TypeInit => ({
  Sum: { case: 'builtin', value: { builtin: b, args } },
});
// packageWithField's strings: 0 P, 1 1.0.0, 2 M, 3 R, 4 f; dotted names: 0 M, 1 R.
const selfCon = (...args: TypeInit[]): TypeInit => ({
  Sum: {
    case: 'con',
    value: {
      tycon: {
        module: {
          packageId: { Sum: { case: 'selfPackageId', value: {} } },
          moduleNameInternedDname: 0,
        },
        nameInternedDname: 1,
      },
      args,
    },
  },
});

/** The type of field `f` of `M:R` when its (interned) type is `types[last]`. */
function fieldType(
  types: TypeInit[],
  change?: (pkg: ReturnType<typeof packageWithField>) => void,
): DamlType {
  const pkg = packageWithField(types.length - 1, types.map(typeBytes));
  change?.(pkg);
  const archive = readDalf(archiveOf(lf2Payload(pkg)), { source: 'crafted.dalf' });
  const dt = archive.signature.modules[0]!.dataTypes[0]!;
  if (dt.shape.kind !== 'record') throw new Error('not a record');
  return dt.shape.fields[0]!.type;
}

describe('Daml-LF types as DamlTypes', () => {
  it('builtins, with Numeric scales from type-level numbers', () => {
    expect(fieldType([builtin(BuiltinType.PARTY)])).toEqual({ kind: 'Party' });
    expect(
      fieldType([{ Sum: { case: 'nat', value: 7n } }, builtin(BuiltinType.NUMERIC, interned(0))]),
    ).toEqual({ kind: 'Numeric', scale: 7 });
    expect(
      fieldType([
        builtin(BuiltinType.TEXT),
        builtin(BuiltinType.INT64),
        builtin(BuiltinType.GENMAP, interned(0), interned(1)),
      ]),
    ).toEqual({ kind: 'GenMap', key: { kind: 'Text' }, value: { kind: 'Int64' } });
  });

  it('type applications written as TApp (Daml-LF 2.dev) are flattened', () => {
    const tapp = (lhs: TypeInit, rhs: TypeInit): TypeInit => ({
      Sum: { case: 'tapp', value: { lhs, rhs } },
    });
    expect(
      fieldType([
        builtin(BuiltinType.TEXT),
        builtin(BuiltinType.INT64),
        tapp(tapp(selfCon(), interned(1)), interned(0)),
      ]),
    ).toEqual({
      kind: 'Con',
      ref: expect.objectContaining({ module: 'M', name: 'R' }) as unknown,
      args: [{ kind: 'Int64' }, { kind: 'Text' }],
    });
    expect(
      fieldType([builtin(BuiltinType.TEXT), tapp(builtin(BuiltinType.OPTIONAL), interned(0))]),
    ).toEqual({ kind: 'Optional', of: { kind: 'Text' } });
  });

  it('a synonym of the package is expanded with its arguments', () => {
    const type = fieldType(
      [
        builtin(BuiltinType.INT64),
        { Sum: { case: 'var', value: { varInternedStr: 5 } } },
        builtin(BuiltinType.LIST, interned(1)),
        {
          Sum: {
            case: 'syn',
            value: {
              tysyn: {
                module: {
                  packageId: { Sum: { case: 'selfPackageId', value: {} } },
                  moduleNameInternedDname: 0,
                },
                nameInternedDname: 2,
              },
              args: [interned(0)],
            },
          },
        },
      ],
      (pkg) => {
        pkg.internedStrings.push('a', 'Many');
        pkg.internedDottedNames.push({
          $typeName: 'daml_lf_2.InternedDottedName',
          segmentsInternedStr: [6],
        });
        pkg.modules[0]!.synonyms.push({
          $typeName: 'daml_lf_2.DefTypeSyn',
          nameInternedDname: 2,
          params: [{ $typeName: 'daml_lf_2.TypeVarWithKind', varInternedStr: 5 }],
          type: { $typeName: 'daml_lf_2.Type', Sum: { case: 'internedType', value: 2 } },
        });
      },
    );
    expect(type).toEqual({ kind: 'List', of: { kind: 'Int64' } });
  });

  it('what no ledger value has becomes Unsupported, named', () => {
    expect(fieldType([builtin(BuiltinType.ANY)])).toEqual({ kind: 'Unsupported', text: 'Any' });
    expect(
      fieldType([builtin(BuiltinType.TEXT), builtin(BuiltinType.ARROW, interned(0), interned(0))]),
    ).toEqual({ kind: 'Unsupported', text: 'Text -> Text' });
    expect(fieldType([{ Sum: { case: 'struct', value: {} } }])).toEqual({
      kind: 'Unsupported',
      text: 'struct',
    });
    expect(fieldType([builtin(BuiltinType.NUMERIC)])).toEqual({
      kind: 'Unsupported',
      text: 'NUMERIC',
    });
  });

  it('refuses a type-level number outside 0..37', () => {
    const err = errorOf(() => fieldType([{ Sum: { case: 'nat', value: 38n } }]));
    expect(err.code).toBe('ARCHIVE_CORRUPT');
    expect(err.message).toMatch(/type-level number 38/);
  });
});
