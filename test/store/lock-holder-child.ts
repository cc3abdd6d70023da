// Run by store-lock.test.ts: opens the store as the bot does (exclusive, group commit), writes an
// intent, says so on stdout, and keeps writing until it is killed.
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { eventIntent } from './store-fixtures.js';

const store = openSqliteStore({ dir: process.argv[2]!, exclusive: true, groupCommit: true });
store.recordIntents([eventIntent(1)]);
await store.sync();
process.stdout.write('ready\n');
let offset = 2;
const timer = setInterval(() => {
  store.recordIntents([eventIntent(offset++)]);
}, 20);
setTimeout(() => clearInterval(timer), 60_000).unref();
