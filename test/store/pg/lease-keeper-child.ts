// Run by lease-keeper.test.ts: one fleet member in its own process, so the test can SIGKILL and
// SIGSTOP it for real. Prints one JSON line per event; ends by itself after a bound.
import pg from 'pg';
import { systemClock } from '../../../src/core/clock.js';
import { LeaseKeeper } from '../../../src/store/pg/lease-keeper.js';
import { LeaseStore } from '../../../src/store/pg/lease-store.js';

const [url, schema, name, leaseMs, ruleList] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const pool = new pg.Pool({ connectionString: url, max: 2 });
const print = (event: string, value: unknown): void => {
  process.stdout.write(`${JSON.stringify({ event, value })}\n`);
};
const keeper = new LeaseKeeper({
  store: new LeaseStore(pool, schema, Number(leaseMs)),
  schema,
  me: { instanceId: `${name}-${process.pid}`, name },
  clock: systemClock,
  ruleIds: ruleList.split(','),
  events: {
    acquired: (holds) => print('acquired', holds),
    lost: (holds) => print('lost', holds),
    error: (err) => print('error', String(err)),
  },
});
keeper.start();
print('started', keeper.instanceId);
setTimeout(() => {
  void keeper
    .stop()
    .then(() => pool.end())
    .then(() => process.exit(0));
}, 60_000);
