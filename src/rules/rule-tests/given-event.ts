import { sha256Hex } from '../../core/sha256-hex.js';
import type { YamlLocator, YamlPath } from '../../core/yaml-locator.js';
import type {
  ArchivedEvent,
  CreatedEvent,
  Event,
  ExercisedEvent,
} from '../../ledger/wire/wire-types.js';
import type { SourcePos } from '../compiled-rule.js';
import { numberText } from '../daml-number-text.js';
import type { TransactionInfo } from '../event-variable.js';
import { parseTemplateRef } from '../parse-template-ref.js';
import type { RuleProblemCode } from '../rule-problem.js';
import { DEFAULT_NOW, type GivenEvent, type RULE_TEST_KINDS } from './rule-test-case.js';

type Raw = Record<string, unknown>;

/** What building one case needs: where things are, the parties, and where problems go. */
export type BuildContext = {
  readonly at: YamlLocator;
  readonly parties: Readonly<Record<string, string>>;
  readonly fileNow: string | null;
  readonly caseIndex: number;
  /** Filled in: made-up package id → package name (see RuleTestFile.packageNames). */
  readonly packageNames: Map<string, string>;
  readonly report: (pos: SourcePos, code: RuleProblemCode, message: string, hint?: string) => void;
};

/** Party aliases of the test file become their ids; anything else is taken as a party id. */
export function resolveAll(value: unknown, parties: Readonly<Record<string, string>>): string[] {
  return asList(value).map((p) => (Object.hasOwn(parties, p) ? parties[p]! : p));
}

export function asList(value: unknown): string[] {
  return typeof value === 'string' ? [value] : (value as string[]);
}

/** A stable fake package id for a package name: tests need the package-id form in events. */
export function testPackageId(packageName: string): string {
  return sha256Hex(`ledgerbot-test-package:${packageName}`);
}

/**
 * Daml values on the wire carry Int64 and Numeric as text. Numbers written in a test file are
 * turned into text the same way, so a rule that works in a test works against a ledger.
 */
function wireValue(value: unknown): unknown {
  if (typeof value === 'number') return numberText(value) ?? String(value);
  if (Array.isArray(value)) return value.map(wireValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wireValue(v)]));
  }
  return value;
}

/**
 * An interface (or template) reference of a test file in the form events carry: `#name:M:E`
 * becomes `<testPackageId(name)>:M:E`; null (reported) when it is not a reference.
 */
function wireId(text: unknown, pos: SourcePos, ctx: BuildContext): string | null {
  const ref = typeof text === 'string' ? parseTemplateRef(text) : null;
  if (ref === null) {
    ctx.report(
      pos,
      'BAD_TEMPLATE_REF',
      `"${String(text)}" is not an interface reference`,
      'write "#package-name:Module:Interface"',
    );
    return null;
  }
  if (ref.form === 'package-id') return ref.text;
  const id = testPackageId(ref.packageName);
  ctx.packageNames.set(id, ref.packageName);
  return `${id}:${ref.qualifiedName}`;
}

/** `interfaceViews:` of a created event: each view, or a failed one (`error:`). */
function interfaceViewsOf(
  raw: unknown,
  path: YamlPath,
  ctx: BuildContext,
): NonNullable<CreatedEvent['interfaceViews']> | null {
  const out: NonNullable<CreatedEvent['interfaceViews']> = [];
  const items = (raw ?? []) as Raw[];
  for (const [i, item] of items.entries()) {
    const interfaceId = wireId(item.interface, ctx.at.pos([...path, i, 'interface']), ctx);
    if (interfaceId === null) return null;
    const error = item.error as string | undefined;
    out.push(
      error === undefined
        ? {
            interfaceId,
            viewStatus: { code: 0, message: '', details: [] },
            viewValue: wireValue(item.view ?? {}),
          }
        : { interfaceId, viewStatus: { code: 9, message: error, details: [] } },
    );
  }
  return out;
}

/** `implementedInterfaces:` of an archive or an exercise, in the package-id form. */
function interfaceIdsOf(raw: unknown, path: YamlPath, ctx: BuildContext): string[] | null {
  if (raw === undefined) return [];
  const out: string[] = [];
  for (const [i, text] of asList(raw).entries()) {
    const id = wireId(text, ctx.at.pos(typeof raw === 'string' ? path : [...path, i]), ctx);
    if (id === null) return null;
    out.push(id);
  }
  return out;
}

export function buildEvent(
  kind: (typeof RULE_TEST_KINDS)[number],
  g: Raw,
  path: YamlPath,
  ctx: BuildContext,
  index: number,
  nowText: string | null,
): GivenEvent | null {
  const ref = parseTemplateRef(g.template as string);
  if (ref === null) {
    ctx.report(
      ctx.at.pos([...path, 'template']),
      'BAD_TEMPLATE_REF',
      `"${g.template as string}" is not a template reference`,
      'write "#package-name:Module:Entity", e.g. "#invoices:Invoice:Invoice"',
    );
    return null;
  }
  const packageName =
    (g.packageName as string | undefined) ?? (ref.form === 'package-name' ? ref.packageName : '');
  if (packageName === '') {
    ctx.report(
      ctx.at.pos(path),
      'MISSING_KEY',
      'a package-id template reference needs `packageName:` too',
    );
    return null;
  }
  if (ref.form === 'package-name') ctx.packageNames.set(testPackageId(packageName), packageName);
  const templateId =
    ref.form === 'package-name' ? `${testPackageId(packageName)}:${ref.qualifiedName}` : ref.text;
  const seed = `${ctx.caseIndex}:${path.join('.')}`;
  const offset = (g.offset as number | undefined) ?? index + 1;
  const nodeId = (g.nodeId as number | undefined) ?? 0;
  const contractId = (g.contractId as string | undefined) ?? `00${sha256Hex(`contract:${seed}`)}`;
  const witnesses =
    g.witnesses === undefined ? Object.values(ctx.parties) : resolveAll(g.witnesses, ctx.parties);
  const recordTime = (g.recordTime as string | undefined) ?? nowText ?? DEFAULT_NOW;
  const transaction: TransactionInfo = {
    updateId: (g.updateId as string | undefined) ?? `1220${sha256Hex(`update:${seed}`)}`,
    offset,
    recordTime,
    effectiveAt: (g.effectiveAt as string | undefined) ?? recordTime,
    workflowId: (g.workflowId as string | undefined) ?? '',
  };
  const base = { offset, nodeId, contractId, templateId, packageName, witnessParties: witnesses };
  let event: Event;
  const implemented = interfaceIdsOf(
    g.implementedInterfaces,
    [...path, 'implementedInterfaces'],
    ctx,
  );
  if (implemented === null) return null;
  if (kind === 'created') {
    const views = interfaceViewsOf(g.interfaceViews, [...path, 'interfaceViews'], ctx);
    if (views === null) return null;
    const signatories =
      g.signatories === undefined ? witnesses : resolveAll(g.signatories, ctx.parties);
    const created: CreatedEvent = {
      ...base,
      contractKey: g.contractKey === undefined ? null : wireValue(g.contractKey),
      createArgument: wireValue(g.createArgument ?? {}),
      createdEventBlob: (g.createdEventBlob as string | undefined) ?? '',
      interfaceViews: views,
      signatories,
      observers: g.observers === undefined ? [] : resolveAll(g.observers, ctx.parties),
      createdAt: (g.createdAt as string | undefined) ?? recordTime,
      representativePackageId: templateId.split(':')[0]!,
      acsDelta: true,
    };
    event = { CreatedEvent: created };
  } else if (kind === 'exercised') {
    const exercised: ExercisedEvent = {
      ...base,
      choice: g.choice as string,
      choiceArgument: wireValue(g.choiceArgument ?? {}),
      actingParties:
        g.actingParties === undefined ? witnesses : resolveAll(g.actingParties, ctx.parties),
      consuming: (g.consuming as boolean | undefined) ?? true,
      lastDescendantNodeId: (g.lastDescendantNodeId as number | undefined) ?? nodeId,
      exerciseResult: wireValue(g.exerciseResult ?? null),
      implementedInterfaces: implemented,
      acsDelta: (g.consuming as boolean | undefined) ?? true,
    };
    if (g.interfaceId !== undefined) {
      const interfaceId = wireId(g.interfaceId, ctx.at.pos([...path, 'interfaceId']), ctx);
      if (interfaceId === null) return null;
      exercised.interfaceId = interfaceId;
    }
    event = { ExercisedEvent: exercised };
  } else {
    const archived: ArchivedEvent = { ...base, implementedInterfaces: implemented };
    event = { ArchivedEvent: archived };
  }
  return { pos: ctx.at.pos(path), transaction, event };
}
