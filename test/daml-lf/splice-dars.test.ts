import { describe, expect, it } from 'vitest';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { skipWithoutShared } from '../support/shared-files.js';
import { declaredBy, declaredIn, readSharedDar } from './shared-dar.js';

/**
 * The Canton Network's token: the token standard's `Holding` interface (its own DAR, and as a
 * dependency of splice-amulet), and `Amulet` / `LockedAmulet`, which implement it from another
 * package. The oracle for interface rules: HoldingV1.daml and Splice/Amulet.daml in the DARs.
 */

const HOLDING_DAR = 'splice-api-token-holding-v1-1.0.0.dar';
const AMULET_DAR = 'splice-amulet-0.1.14.dar';

describe.skipIf(skipWithoutShared(`daml-lf/dars/${HOLDING_DAR}`))(HOLDING_DAR, () => {
  it('has the signature HoldingV1.daml declares: Holding with its view HoldingView', async () => {
    const dar = await readSharedDar(HOLDING_DAR);
    const m = 'Splice.Api.Token.HoldingV1';
    expect(dar.render('splice-api-token-holding-v1')).toBe(
      [
        'package splice-api-token-holding-v1 1.0.0 (Daml-LF 2.1)',
        'depends on daml-stdlib-DA-Time-Types, ghc-stdlib-DA-Internal-Template, splice-api-token-metadata-v1',
        `module ${m}`,
        `  record HoldingView = { owner : Party; instrumentId : ${m}:InstrumentId; amount : Numeric 10; lock : Optional ${m}:Lock; meta : splice-api-token-metadata-v1:Splice.Api.Token.MetadataV1:Metadata }`,
        '  record Lock = { holders : [Party]; expiresAt : Optional Time; expiresAfter : Optional daml-stdlib-DA-Time-Types:DA.Time.Types:RelTime; context : Optional Text }',
        '  record InstrumentId = { admin : Party; id : Text }',
        '  (not serializable) interface-type Holding',
        '  interface Holding',
        `    view ${m}:HoldingView`,
        '    choice Archive : ghc-stdlib-DA-Internal-Template:DA.Internal.Template:Archive -> ()',
      ].join('\n'),
    );
    expect(dar.render('splice-api-token-metadata-v1')).toContain(
      '  record Metadata = { values : TextMap Text }',
    );
    const declared = new Map([...dar.sources.values()].flatMap((s) => [...declaredIn(s)]));
    expect(declaredBy(dar.pkg('splice-api-token-holding-v1'))).toEqual(declared);
  });
});

describe.skipIf(skipWithoutShared(`daml-lf/dars/${AMULET_DAR}`))(AMULET_DAR, () => {
  it('Amulet and LockedAmulet implement HoldingV1:Holding, a package of the same DAR', async () => {
    const dar = await readSharedDar(AMULET_DAR);
    const holding = dar.pkg('splice-api-token-holding-v1');
    const amulet = dar.pkg('splice-amulet');
    const module = amulet.modules.find((m) => m.name === 'Splice.Amulet')!;
    const template = (name: string) => module.templates.find((t) => t.name === name)!;
    const holdingRef = {
      packageId: holding.packageId,
      module: 'Splice.Api.Token.HoldingV1',
      name: 'Holding',
    };
    expect(template('Amulet').implements).toEqual([holdingRef]);
    expect(template('LockedAmulet').implements).toEqual([holdingRef]);
    const here = (m: string, name: string) => ({
      kind: 'Con',
      ref: { packageId: amulet.packageId, module: m, name },
      args: [],
    });
    expect(template('Amulet').fields).toEqual([
      { name: 'dso', type: { kind: 'Party' } },
      { name: 'owner', type: { kind: 'Party' } },
      { name: 'amount', type: here('Splice.Fees', 'ExpiringAmount') },
    ]);
    expect(template('LockedAmulet').fields).toEqual([
      { name: 'amulet', type: here('Splice.Amulet', 'Amulet') },
      { name: 'lock', type: here('Splice.Expiry', 'TimeLock') },
    ]);
    expect(template('Amulet').choices.map((c) => [c.name, c.consuming])).toEqual([
      ['Amulet_Expire', true],
      ['Archive', true],
    ]);
    expect(template('Amulet').choices[0]!.result).toEqual(
      here('Splice.Amulet', 'Amulet_ExpireResult'),
    );

    const catalogue = PackageCatalogue.create(dar.dar.packages.map((p) => p.signature));
    expect(
      catalogue
        .implementersOf(holdingRef)
        .map((e) => e.ref.name)
        .sort(),
    ).toEqual(['Amulet', 'LockedAmulet']);
    const view = catalogue.resolve({
      kind: 'Con',
      ref: { ...holdingRef, name: 'HoldingView' },
      args: [],
    });
    expect(view.kind === 'Record' && view.fields.map((f) => f.name)).toEqual([
      'owner',
      'instrumentId',
      'amount',
      'lock',
      'meta',
    ]);
  });

  it('has every template, interface and choice the amulet sources declare', async () => {
    const dar = await readSharedDar(AMULET_DAR);
    const declared = new Map([...dar.sources.values()].flatMap((s) => [...declaredIn(s)]));
    expect(declared.size).toBeGreaterThan(20);
    expect(declaredBy(dar.pkg('splice-amulet'))).toEqual(declared);
  });
});
