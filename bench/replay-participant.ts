import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { frameTemplate, maxOffset, renderFrame, type FrameTemplate } from './frame-template.js';
import type { RecordedPackage } from './recorded-frames.js';

/**
 * A bench-only participant on 127.0.0.1 that replays recorded sandbox frames much faster than
 * the sandbox can produce them: the JSON Ledger API endpoints the bot uses, no ledger behind them.
 *  - GET /v2/state/ledger-end: the last offset streamed so far (a live ledger's end);
 *  - WS /v2/updates: the recorded JsGetUpdatesResponse frames, cycled with increasing offsets and
 *    per-cycle update ids, until `events` events were sent; the socket then stays open (idle);
 *    sending waits while the socket's buffer holds more than 1 MiB, so the bot sets the pace;
 *  - POST /v2/commands/async/submit: 200 `{}`, and a success completion for the command on
 *    every open completions socket (the recorded completion frame with the command's fields);
 *  - WS /v2/commands/completions: those completions;
 *  - GET /v2/packages and GET /v2/packages/{id}: the recorded sandbox's packages, as Canton
 *    serves them (the payload bytes, `Canton-Package-Hash`), which the bot reads at start.
 * Anything else answers 404 and is counted in `unknown`.
 */
export type ReplayParticipant = {
  readonly url: string;
  /** Events sent on the update stream so far. */
  readonly eventsSent: () => number;
  readonly framesSent: () => number;
  readonly submits: () => number;
  readonly done: () => boolean;
  readonly unknown: readonly string[];
  close(): Promise<void>;
};

type Completion = {
  commandId: string;
  submissionId?: string;
  updateId: string;
  userId: string;
  actAs: string[];
  offset: number;
  deduplicationPeriod?: unknown;
  synchronizerTime?: { synchronizerId: string; recordTime: string };
};

export async function startReplayParticipant(options: {
  readonly frames: readonly string[];
  /** A recorded JsCompletionStreamResponse frame with a Completion, as the shape to copy. */
  readonly completion: string;
  readonly events: number;
  readonly packages: readonly RecordedPackage[];
}): Promise<ReplayParticipant> {
  const packages = new Map(options.packages.map((p) => [p.packageId, p.payload]));
  const templates: FrameTemplate[] = options.frames.map(frameTemplate);
  const eventsOf = options.frames.map((f) => {
    const v = JSON.parse(f) as { update?: { Transaction?: { value: { events: unknown[] } } } };
    return v.update?.Transaction?.value.events.length ?? 0;
  });
  const span = maxOffset(templates) + 1;
  const offsetOf = templates.map((t) => maxOffset([t]));
  const shape = (
    JSON.parse(options.completion) as {
      completionResponse: { Completion: { value: Completion } };
    }
  ).completionResponse.Completion.value;
  let end = 0;
  let sentEvents = 0;
  let sentFrames = 0;
  let submits = 0;
  let finished = false;
  const unknown: string[] = [];
  const completionSockets = new Set<WebSocket>();

  const body = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  const json = (res: ServerResponse, status: number, text: string): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  };

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      const packageId = /^\/v2\/packages\/([0-9a-f]{64})$/.exec(path ?? '')?.[1];
      if (req.method === 'GET' && path === '/v2/state/ledger-end') {
        json(res, 200, `{"offset":${end}}`);
      } else if (req.method === 'GET' && path === '/v2/packages') {
        json(res, 200, JSON.stringify({ packageIds: [...packages.keys()] }));
      } else if (req.method === 'GET' && packageId !== undefined && packages.has(packageId)) {
        res
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'canton-package-hash': packageId,
          })
          .end(packages.get(packageId));
      } else if (req.method === 'POST' && path === '/v2/commands/async/submit') {
        const c = JSON.parse(await body(req)) as {
          commandId: string;
          submissionId?: string;
          userId?: string;
          actAs?: string[];
        };
        submits++;
        json(res, 200, '{}');
        const completion: Completion = {
          ...shape,
          commandId: c.commandId,
          updateId: `1220${submits.toString(16).padStart(64, '0')}`,
          userId: c.userId ?? shape.userId,
          actAs: c.actAs ?? shape.actAs,
          offset: end,
        };
        if (c.submissionId === undefined) delete completion.submissionId;
        else completion.submissionId = c.submissionId;
        const frame = JSON.stringify({ completionResponse: { Completion: { value: completion } } });
        for (const ws of completionSockets) ws.send(frame);
      } else {
        await body(req);
        unknown.push(`${req.method ?? '?'} ${path ?? ''}`);
        json(
          res,
          404,
          JSON.stringify({
            code: 'NOT_FOUND',
            cause: `the replay participant does not serve ${path ?? ''}`,
            context: {},
            errorCategory: 11,
            grpcCodeValue: 5,
          }),
        );
      }
    })();
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (path === '/v2/commands/completions') {
        completionSockets.add(ws);
        ws.on('close', () => completionSockets.delete(ws));
      } else if (path === '/v2/updates') {
        ws.once('message', (m: Buffer) => {
          const request = JSON.parse(m.toString('utf8')) as { beginExclusive?: number };
          void streamUpdates(ws, request.beginExclusive ?? 0);
        });
      } else {
        unknown.push(`WS ${path ?? ''}`);
        ws.close(1008, 'not served');
      }
    });
  });

  /** Frames after `begin`: cycle c, frame i has the offsets of frame i shifted by c * span. */
  async function streamUpdates(ws: WebSocket, begin: number): Promise<void> {
    const firstCycle = Math.floor(begin / span);
    for (let cycle = firstCycle; sentEvents < options.events; cycle++) {
      for (let i = 0; i < templates.length && sentEvents < options.events; i++) {
        if (ws.readyState !== ws.OPEN) return;
        const text = renderFrame(templates[i]!, cycle * span, cycle);
        const offset = offsetOf[i]! + cycle * span;
        if (offset <= begin) continue;
        while (ws.bufferedAmount > 1 << 20) {
          await new Promise((r) => setTimeout(r, 1));
          if (ws.readyState !== ws.OPEN) return;
        }
        ws.send(text);
        end = Math.max(end, offset);
        sentEvents += eventsOf[i]!;
        sentFrames++;
        // Let the HTTP side (submits) and the timers run between frames.
        if (sentFrames % 64 === 0) await new Promise((r) => setImmediate(r));
      }
    }
    finished = true;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    eventsSent: () => sentEvents,
    framesSent: () => sentFrames,
    submits: () => submits,
    done: () => finished,
    unknown,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
