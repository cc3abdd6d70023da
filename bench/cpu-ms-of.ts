import { readFileSync } from 'node:fs';

/**
 * utime + stime of a process, or with `thread` of one of its threads (the main thread's id is the
 * process id), in ms, from /proc (clock ticks of 10 ms); undefined without /proc. CPU time is
 * less sensitive than wall time to other work on the machine.
 */
export function cpuMsOf(pid: number | undefined, thread?: number): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(
      thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
      'utf8',
    );
    // Fields after the command name (which may hold spaces, inside parentheses).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
