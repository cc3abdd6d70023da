// The bench starts its own PostgreSQL the same way (e2e rows, chaos): one implementation, in bench/.
export { pgBinDir, pgSkipReason, startPgServer, type PgServer } from '../../bench/pg-server.js';
