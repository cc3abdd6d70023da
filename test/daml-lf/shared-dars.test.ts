import { describe, expect, it } from 'vitest';
import { skipWithoutShared } from '../support/shared-files.js';
import { declaredBy, declaredIn, readSharedDar } from './shared-dar.js';

/**
 * The three shared DARs (SDK 3.3, 3.4 and 3.5 builds, Daml-LF 2.1, 2.dev and 2.2) read in full,
 * each package signature compared line by line with what its `.daml` sources declare (written
 * out below from AllKindsOf.daml, MainApp.daml, ExternalDep.daml and PartyReplication.daml; the
 * first, second and last are in the DARs and are also checked mechanically for their templates,
 * interfaces and choices). `Decimal` is `Numeric 10`, a tuple is `DA.Types:Tuple2`, and every
 * template and interface has the implicit consuming `Archive` choice.
 */

const ARCHIVE =
  'choice Archive : ghc-stdlib-DA-Internal-Template:DA.Internal.Template:Archive -> ()';

function sourceCheck(dar: Awaited<ReturnType<typeof readSharedDar>>, pkg: string): void {
  const declared = new Map([...dar.sources.values()].flatMap((source) => [...declaredIn(source)]));
  expect(declared.size).toBeGreaterThan(0);
  expect(declaredBy(dar.pkg(pkg))).toEqual(declared);
}

describe.skipIf(skipWithoutShared('daml-lf/dars/all-kinds-of.dar'))(
  'all-kinds-of.dar (SDK 3.3)',
  () => {
    it('has the signature AllKindsOf.daml declares', async () => {
      const dar = await readSharedDar('all-kinds-of.dar');
      expect(dar.dar.main.signature.name).toBe('all-kinds-of');
      expect(dar.dar.packages).toHaveLength(30);
      const everything =
        '{ operator : Party; someBoolean : Bool; someInteger : Int; someDecimal : Numeric 10; someMaybe : Optional Int; someMaybeNot : Optional Int; someText : Text; someDate : Date; someDatetime : Time; someSimpleList : [Int]; someSimplePair : AllKindsOf:MyPair Int; someNestedPair : AllKindsOf:MyPair (AllKindsOf:MyPair Int); someUglyNesting : AllKindsOf:VPair (AllKindsOf:MyPair (AllKindsOf:MyPair Int)); someMeasurement : Numeric 10; someEnum : AllKindsOf:Color; theUnit : () }';
      expect(dar.render('all-kinds-of')).toBe(
        [
          'package all-kinds-of 1.0.0 (Daml-LF 2.1)',
          'depends on ghc-stdlib-DA-Internal-Template',
          'module AllKindsOf',
          '  record MappyContract = { operator : Party; value : TextMap Text }',
          '  record Accept = {}',
          `  record OneOfEverything = ${everything}`,
          '  enum Color = Red | Green | Blue',
          '  variant VPair a = Left a | Right a | Both (AllKindsOf:VPair a)',
          '  record MyPair a = { left : a; right : a }',
          '  synonym Measurement = Numeric 10',
          '  template MappyContract = { operator : Party; value : TextMap Text }',
          `    ${ARCHIVE}`,
          `  template OneOfEverything = ${everything}`,
          `    ${ARCHIVE}`,
          '    choice Accept : AllKindsOf:Accept -> ()',
        ].join('\n'),
      );
      sourceCheck(dar, 'all-kinds-of');
    });
  },
);

describe.skipIf(skipWithoutShared('daml-lf/dars/DamlDefinitionsServiceMain.dar'))(
  'DamlDefinitionsServiceMain.dar (SDK 3.4, with its dependency package)',
  () => {
    it('has the signature MainApp.daml declares', async () => {
      const dar = await readSharedDar('DamlDefinitionsServiceMain.dar');
      expect(dar.dar.main.signature.name).toBe('DamlDefinitionsServiceMain');
      const builtins =
        '{ someParty : Party; someInt : Int; someDecimal : Numeric 10; someNumeric7 : Numeric 7; someText : Text; someBool : Bool; someDate : Date; someTime : Time; relTime : daml-stdlib-DA-Time-Types:DA.Time.Types:RelTime }';
      const dep = 'DamlDefinitionsServiceDep:ExternalDep';
      const main = `{ owner : Party; externalRecord : ${dep}:SomeVariant; externalInterface : ContractId ${dep}:MyInterface; someList : [${dep}:AnotherRecord]; someMap : Map Text ${dep}:AnotherRecord }`;
      expect(dar.render('DamlDefinitionsServiceMain')).toBe(
        [
          'package DamlDefinitionsServiceMain 3.4.0 (Daml-LF 2.dev)',
          'depends on DamlDefinitionsServiceDep, daml-stdlib-DA-Time-Types, ghc-stdlib-DA-Internal-Template',
          'module MainApp',
          `  record AllBuiltinTypesTemplate = ${builtins}`,
          '  record MainTemplate_Choice = {}',
          `  record MainTemplate = ${main}`,
          '  record RecordInMain = { someInt : Int }',
          `  template AllBuiltinTypesTemplate = ${builtins}`,
          `    ${ARCHIVE}`,
          `  template MainTemplate = ${main}`,
          `    ${ARCHIVE}`,
          '    choice MainTemplate_Choice : MainApp:MainTemplate_Choice -> MainApp:RecordInMain',
        ].join('\n'),
      );
      sourceCheck(dar, 'DamlDefinitionsServiceMain');
    });

    it('has the signature ExternalDep.daml declares (interface, keys, generic and recursive types)', async () => {
      const dar = await readSharedDar('DamlDefinitionsServiceMain.dar');
      const bar =
        '{ anotherParty : Party; firstTemplateRef : ContractId ExternalDep:TemplateFoo; someRecordForKey : ExternalDep:SomeParamRecord Int }';
      const foo =
        '{ someParty : Party; someRecordField : ExternalDep:SomeVariant; someRecordTyped : ExternalDep:SomeParamRecord ExternalDep:SomeVariant; someOptionalRecField : Optional (ExternalDep:MyList Text) }';
      expect(dar.render('DamlDefinitionsServiceDep')).toBe(
        [
          'package DamlDefinitionsServiceDep 3.4.0 (Daml-LF 2.dev)',
          'depends on daml-prim-DA-Types, ghc-stdlib-DA-Internal-Template',
          'module ExternalDep',
          `  record TemplateBar = ${bar}`,
          '  record SourceTemplate_Args_RetRecord = { choiceArg : ExternalDep:SomeParamRecord Time }',
          '  record TemplateFoo_NoArgs_RetUnit = {}',
          `  record TemplateFoo = ${foo}`,
          '  record MyNonConsumingChoice = {}',
          '  record MyChoice = { argument1 : Bool; argument2 : Int }',
          '  record MyInterfaceViewType = { name : Text; value : Int }',
          '  record AnotherRecord = { someText : Text }',
          '  variant MyList t = Nil () | MyCons (ExternalDep:MyList.MyCons t)',
          '  record MyList.MyCons t = { head : t; tail : ExternalDep:MyList t }',
          '  variant SomeVariant = SomeVariant Int | SomeEnum ()',
          '  record SomeParamRecord a = { foo : a }',
          '  enum SomeEnum = One | Two',
          '  (not serializable) interface-type MyInterface',
          `  template TemplateBar = ${bar}`,
          '    key daml-prim-DA-Types:DA.Types:Tuple2 Party (ExternalDep:SomeParamRecord Int)',
          '    implements ExternalDep:MyInterface',
          `    ${ARCHIVE}`,
          `  template TemplateFoo = ${foo}`,
          '    key Party',
          `    ${ARCHIVE}`,
          '    nonconsuming choice TemplateFoo_NoArgs_RetUnit : ExternalDep:TemplateFoo_NoArgs_RetUnit -> ()',
          '    choice SourceTemplate_Args_RetRecord : ExternalDep:SourceTemplate_Args_RetRecord -> ExternalDep:AnotherRecord',
          '  interface MyInterface',
          '    view ExternalDep:MyInterfaceViewType',
          '    nonconsuming choice MyNonConsumingChoice : ExternalDep:MyNonConsumingChoice -> Int',
          '    choice MyChoice : ExternalDep:MyChoice -> daml-prim-DA-Types:DA.Types:Tuple2 (ContractId ExternalDep:MyInterface) Int',
          `    ${ARCHIVE}`,
        ].join('\n'),
      );
    });

    it('resolves references across the DAR: every type a signature names is in the DAR', async () => {
      const dar = await readSharedDar('DamlDefinitionsServiceMain.dar');
      const ids = new Set(dar.dar.packages.map((p) => p.packageId));
      for (const p of dar.dar.packages) {
        for (const dep of p.signature.dependencies)
          expect(ids.has(dep), p.signature.name).toBe(true);
      }
      const relTime = dar.pkg('daml-stdlib-DA-Time-Types').modules[0]!.dataTypes[0]!;
      expect(relTime).toEqual({
        name: 'RelTime',
        params: [],
        serializable: true,
        shape: { kind: 'record', fields: [{ name: 'microseconds', type: { kind: 'Int64' } }] },
      });
    });
  },
);

describe.skipIf(
  skipWithoutShared('daml-lf/dars/canton-builtin-admin-workflow-party-replication-alpha.dar'),
)('canton-builtin-admin-workflow-party-replication-alpha.dar (SDK 3.5)', () => {
  it('has the signature PartyReplication.daml declares', async () => {
    const dar = await readSharedDar('canton-builtin-admin-workflow-party-replication-alpha.dar');
    const name = 'canton-builtin-admin-workflow-party-replication-alpha';
    const m = 'Canton.Internal.PartyReplication';
    const agreement = `{ partyReplicationId : Text; partyId : Party; sourceParticipant : Party; targetParticipant : Party; sequencerUid : Text; topologySerial : Int; participantPermission : ${m}:ParticipantPermission }`;
    const proposal = `{ partyReplicationId : Text; partyId : Party; sourceParticipant : Party; targetParticipant : Party; sequencerUids : [Text]; topologySerial : Int; participantPermission : ${m}:ParticipantPermission }`;
    expect(dar.render(name)).toBe(
      [
        `package ${name} 3.5.0 (Daml-LF 2.2)`,
        'depends on ghc-stdlib-DA-Internal-Template',
        `module ${m}`,
        '  record Done = { participant : Party }',
        `  record PartyReplicationAgreement = ${agreement}`,
        '  record Reject = { reason : Text }',
        '  record Accept = { sequencerUid : Text }',
        `  record PartyReplicationProposal = ${proposal}`,
        '  enum ParticipantPermission = Submission | Confirmation | Observation',
        `  template PartyReplicationAgreement = ${agreement}`,
        `    ${ARCHIVE}`,
        `    choice Done : ${m}:Done -> ()`,
        `  template PartyReplicationProposal = ${proposal}`,
        `    choice Accept : ${m}:Accept -> ContractId ${m}:PartyReplicationAgreement`,
        `    choice Reject : ${m}:Reject -> ()`,
        `    ${ARCHIVE}`,
      ].join('\n'),
    );
    sourceCheck(dar, name);
    expect(dar.dar.main.signature.lfVersion).toBe('2.2');
  });
});
