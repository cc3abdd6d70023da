import { readFileSync } from 'node:fs';
import { PackageCatalogue } from '../../src/daml-lf/package-catalogue.js';
import { loadModel } from '../../src/sandbox/model/load-model.js';
import { modelSignature } from '../../src/sandbox/model/model-signature.js';

/** The catalogue of sandbox model files given as text (file name → YAML), as `--model` builds it. */
export function modelCatalogue(models: Readonly<Record<string, string>>): PackageCatalogue {
  return PackageCatalogue.create(
    Object.entries(models).map(([file, text]) => modelSignature(loadModel(text, file))),
  );
}

/** The packages of examples/invoices/model.yaml, as `validate --model` catalogues them. */
export const INVOICES: PackageCatalogue = modelCatalogue({
  'model.yaml': readFileSync('examples/invoices/model.yaml', 'utf8'),
});

/**
 * A second, older version of package "invoices" with a template of free-form Optional fields,
 * for rules that show off value forms (test/fixtures/rules/valid/all-features.yaml).
 */
export const INVOICES_WITH_AUDIT: PackageCatalogue = INVOICES.with(
  modelCatalogue({
    'audit.yaml': `package: { name: invoices, version: 0.0.1 }
templates:
  Audit:Entry:
    fields: { by: Optional Party, note: Optional Text, tags: Optional (List Text), month: Optional Text }
    signatories: [by]
`,
  }).packages,
);
