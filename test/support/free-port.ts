// The bench starts servers on free ports too (its PostgreSQL): one implementation, in bench/.
export { freePort } from '../../bench/free-port.js';
