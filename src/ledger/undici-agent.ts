import DispatcherBase from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import UndiciAgent from 'undici/lib/dispatcher/agent.js';

/**
 * undici's Agent without the rest of undici. Its index loads every part of it (fetch, the
 * WebSocket client, the mock agents, the cache, the proxies): about a third of a warm start's
 * module evaluation, none of which the client uses. The index also gives every dispatcher its
 * `request` method; the same is done here, once. The same classes as the index's: a test checks
 * it, and undici is pinned by the lockfile (an upgrade that moves these files fails that test).
 */
Object.assign(DispatcherBase.prototype, api);

export const Agent = UndiciAgent;
