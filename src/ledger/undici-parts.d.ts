// The parts of undici that src/ledger/undici-agent.ts loads without undici's index: CommonJS files
// with no types of their own, each exporting one value (so a default, unlike ledgerbot's modules).
/* eslint-disable no-restricted-syntax, @typescript-eslint/consistent-type-imports */
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: { readonly prototype: object };
  export default Dispatcher;
}
declare module 'undici/lib/api/index.js' {
  const api: object;
  export default api;
}
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}
