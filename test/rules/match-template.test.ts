import { describe, expect, it } from 'vitest';
import type { TemplateRef } from '../../src/rules/compiled-rule.js';
import { templateMismatch } from '../../src/rules/match-template.js';
import { parseTemplateRef } from '../../src/rules/parse-template-ref.js';

/** What templateMismatch says, written the plain way: split the id, then compare. */
function reference(ref: TemplateRef, templateId: string, packageName: string | undefined) {
  const colon = templateId.indexOf(':');
  const qn = colon < 0 ? templateId : templateId.slice(colon + 1);
  const pkg = colon < 0 ? '' : templateId.slice(0, colon);
  if (qn !== ref.qualifiedName) return 'other-template';
  if (ref.form === 'package-name') {
    const name = pkg.startsWith('#') ? pkg.slice(1) : packageName;
    return name === ref.packageName ? null : 'other-package';
  }
  return pkg === ref.packageId ? null : 'other-package';
}

describe('templateMismatch', () => {
  it('agrees with splitting the template id, for every mix of package and name', () => {
    const pkg = 'a'.repeat(64);
    const refs = [
      '#invoices:Invoice:Invoice',
      '#inv:Invoice:Invoice',
      `${pkg}:Invoice:Invoice`,
      '#invoices:Finance.Invoice:Invoice',
    ].map((text) => {
      const ref = parseTemplateRef(text);
      if (ref === null) throw new Error(`not a reference: ${text}`);
      return ref;
    });
    const ids = [
      `${pkg}:Invoice:Invoice`,
      `${'b'.repeat(64)}:Invoice:Invoice`,
      '#invoices:Invoice:Invoice',
      '#inv:Invoice:Invoice',
      '#invoicesX:Invoice:Invoice',
      '#:Invoice:Invoice',
      `${pkg}:Invoice:InvoiceX`,
      `${pkg}:XInvoice:Invoice`,
      `${pkg}:Finance.Invoice:Invoice`,
      'Invoice:Invoice',
      '#invoices',
      'Invoice',
      '',
    ];
    let checked = 0;
    for (const ref of refs) {
      for (const id of ids) {
        for (const name of ['invoices', 'inv', undefined]) {
          expect([ref.text, id, name, templateMismatch(ref, id, name)]).toEqual([
            ref.text,
            id,
            name,
            reference(ref, id, name),
          ]);
          checked += templateMismatch(ref, id, name) === null ? 1 : 0;
        }
      }
    }
    expect(checked).toBeGreaterThan(3);
  });
});
