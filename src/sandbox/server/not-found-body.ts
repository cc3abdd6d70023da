import type { IncomingMessage } from 'node:http';

// What Canton answers for a request no route takes. Its tapir endpoints reject it, and the
// pekko route after them, EndpointsCompanion.notFound, answers with the v1 JSON API's
// ErrorResponse: `errors` holds `s"${request.method}, uri: ${request.uri}"`, where pekko prints
// the method as `HttpMethod(GET)` and the uri as the effective request URI, and
// `ledgerApiError` is a None its derived circe encoder prints as null
// ([C35] http/EndpointsCompanion.scala, http/package.scala ErrorResponse,
// http/json/JsonProtocol.scala ErrorResponseEncoder).

/** The 404 body for `req`: `{"errors":["HttpMethod(GET), uri: http://host/path"],"status":404,...}`. */
export function notFoundBody(req: IncomingMessage): string {
  // HTTP/1.1 requests carry Host; without one the effective URI names the listening socket.
  const host = req.headers.host ?? `${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`;
  const uri = `http://${host}${req.url ?? '/'}`;
  return JSON.stringify({
    errors: [`HttpMethod(${req.method ?? 'GET'}), uri: ${uri}`],
    status: 404,
    ledgerApiError: null,
  });
}

/**
 * A known path asked with another method: tapir's default reject handler (PekkoHttpServerOptions
 * .default, tapir 1.11) answers 405 with this text/plain body before the pekko 404 route is tried.
 */
export const METHOD_NOT_ALLOWED_TEXT = 'Method Not Allowed';
