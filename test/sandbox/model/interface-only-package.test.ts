import { describe, expect, it } from 'vitest';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import { modelSignature } from '../../../src/sandbox/model/model-signature.js';

// A package of interfaces only, as the token standard's API packages are
// (splice-api-token-holding-v1 has the Holding interface and no template).

describe('a model of interfaces only', () => {
  it('loads without templates, and its signature has the interface', () => {
    const model = loadModel(
      `package: { name: api, version: 1.0.0 }
interfaces:
  Api.Holding:Holding:
    view: { owner: Party, amount: Numeric 10 }
`,
      'api.yaml',
    );
    expect(model.templates.size).toBe(0);
    const signature = modelSignature(model);
    const module = signature.modules.find((m) => m.name === 'Api.Holding');
    expect(module?.templates).toEqual([]);
    expect(module?.interfaces.map((i) => i.name)).toEqual(['Holding']);
  });

  it('a model with neither templates nor interfaces is refused at its first line', () => {
    expect(() => loadModel('package: { name: api, version: 1.0.0 }\n', 'empty.yaml')).toThrow(
      /^empty\.yaml:1:1: "templates" is missing/,
    );
  });
});
