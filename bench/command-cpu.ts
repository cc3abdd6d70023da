import { cpuMsOf } from './cpu-ms-of.js';

/**
 * CPU time per command, in µs, over the backlog's commands (bot: from its first `intent finished`
 * line to its N-th; raw: from its first submission to its N-th completion), from /proc:
 * `client`, the bot's process (every thread: the garbage collector's and the compiler's too) or
 * the bench process that runs the raw client; `clientMain`, its main thread alone (the event
 * loop, which bounds the throughput); `sandbox`, the sandbox's process.
 */
export type CommandCpu = {
  readonly client: number;
  readonly clientMain: number;
  readonly sandbox: number;
};

/** CPU times (ms) of the client's process, its main thread and the sandbox, at one moment. */
export type CpuSample = {
  readonly client: number;
  readonly main: number;
  readonly sandbox: number;
};

export function cpuSample(
  clientPid: number | undefined,
  sandboxPid: number | undefined,
): CpuSample | undefined {
  const client = cpuMsOf(clientPid);
  const main = cpuMsOf(clientPid, clientPid);
  const sandbox = cpuMsOf(sandboxPid);
  return client === undefined || main === undefined || sandbox === undefined
    ? undefined
    : { client, main, sandbox };
}

/** µs per command between two samples `commands` apart. */
export function commandCpu(
  from: CpuSample | undefined,
  to: CpuSample | undefined,
  commands: number,
): CommandCpu | undefined {
  if (from === undefined || to === undefined || commands <= 0) return undefined;
  const us = (a: number, b: number): number => ((b - a) * 1000) / commands;
  return {
    client: us(from.client, to.client),
    clientMain: us(from.main, to.main),
    sandbox: us(from.sandbox, to.sandbox),
  };
}
