import type { PackageCatalogue } from '../../src/rules/package-catalogue.js';

/** The templates of examples/invoices/model.yaml, as the runtime would catalogue them. */
export const INVOICES: PackageCatalogue = {
  templates: [
    {
      packageName: 'invoices',
      module: 'Invoice',
      entity: 'Invoice',
      choices: ['Accept', 'Remind', 'Cancel', 'Archive'],
      hasKey: true,
    },
    {
      packageName: 'invoices',
      module: 'Automation',
      entity: 'InvoiceAcceptor',
      choices: ['AcceptInvoice', 'Archive'],
      hasKey: false,
    },
    {
      packageName: 'invoices',
      module: 'Payment',
      entity: 'Payment',
      choices: ['Settle', 'Archive'],
      hasKey: false,
    },
    {
      packageName: 'invoices',
      module: 'Payment',
      entity: 'Receipt',
      choices: ['Archive'],
      hasKey: false,
    },
  ],
};
