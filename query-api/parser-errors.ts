// Answers for requests Node's HTTP parser refuses ('clientError'): the spec's envelope with
// X-Request-ID (generated) and, for a /v1 target, the IP budget's X-RateLimit-Remaining, written
// raw on the socket, which is then closed (the parser cannot resume mid-stream). One refusal is
// not one: a control character in X-Request-ID, whose invalid values SPEC.md replaces, so the
// request is replayed without that header and served as usual.
import type http from 'node:http';
import type net from 'node:net';
import { Duplex } from 'node:stream';
import type { RateLimiter } from '../core/auth/rate-limit.ts';
import { notFound, type SpotError, validationError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { requestIdOf } from '../core/request-id.ts';
import { rateLimited } from './errors.ts';

export interface ParserErrorDeps {
  ipLimiter: RateLimiter;
  /** Methods a path serves, null when no endpoint has it (405 versus 404 for an unknown method). */
  allowedMethods(path: string): string[] | null;
  now: () => number;
  log: Logger;
  /** The header-block cap the server runs with (its maxHeaderSize), named in the message. */
  maxHeaderBytes: number;
}

interface ParserError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
}

const REPLAYED = Symbol('replayed');
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  429: 'Too Many Requests',
};

/** `X-Request-ID` lines holding a byte the strict parser refuses (controls other than tab). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are what it looks for.
const BAD_REQUEST_ID_LINE = /^x-request-id[ \t]*:[^\r\n]*[\x00-\x08\x0b\x0c\x0e-\x1f\x7f][^\r\n]*\r\n/gim;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are what it looks for.
const BAD_VALUE_BYTE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** The head without its bad X-Request-ID lines, when that leaves no other bad byte; else null. */
function withoutBadRequestId(raw: Buffer): Buffer | null {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const head = text.slice(0, end + 2).replace(BAD_REQUEST_ID_LINE, '');
  if (head.length === end + 2 || BAD_VALUE_BYTE.test(head)) return null;
  return Buffer.from(head + text.slice(end + 2), 'latin1');
}

function fieldOf(code: string): string {
  switch (code) {
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return 'Content-Length';
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'Transfer-Encoding';
    case 'HPE_INVALID_URL':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
      return 'path';
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_EOF_STATE':
      return 'body';
    default:
      return 'headers';
  }
}

export function createParserErrorHandler(
  server: http.Server,
  deps: ParserErrorDeps,
): (error: ParserError, socket: net.Socket) => void {
  /** Serves `head` (and whatever follows on the socket) as a new connection of the same server. */
  function replay(socket: net.Socket, packet: Buffer): void {
    const peer = new Duplex({
      read() {},
      write(chunk, _encoding, done) {
        socket.write(chunk, done);
      },
      final(done) {
        socket.end();
        done();
      },
      destroy(error, done) {
        socket.destroy();
        done(error);
      },
    });
    // What the server and Koa read from a socket (the client's address, the timers it arms).
    Object.assign(peer, {
      [REPLAYED]: true,
      remoteAddress: socket.remoteAddress,
      remotePort: socket.remotePort,
      setTimeout: () => peer,
      setNoDelay: () => peer,
      setKeepAlive: () => peer,
    });
    socket.removeAllListeners('data');
    socket.on('data', (chunk: Buffer) => peer.push(chunk));
    socket.on('end', () => peer.push(null));
    socket.on('close', () => peer.destroy());
    peer.push(packet);
    server.emit('connection', peer);
  }

  return (error, socket) => {
    const code = error.code ?? '';
    if (!socket.writable || code === 'ECONNRESET' || !code.startsWith('HPE_')) {
      socket.destroy();
      return;
    }
    const raw = error.rawPacket;
    if (code === 'HPE_INVALID_HEADER_TOKEN' && raw && !(socket as unknown as Record<symbol, unknown>)[REPLAYED]) {
      const packet = withoutBadRequestId(raw);
      if (packet) return replay(socket, packet);
    }
    const line = /^([^ \r\n]*) ([^ \r\n]*)/.exec(raw?.toString('latin1') ?? '');
    const path = (line?.[2] ?? '').split('?')[0]!;
    const headers: Record<string, string> = { 'X-Request-ID': requestIdOf(undefined), Connection: 'close' };
    const envelope = (failure: SpotError) => {
      headers['Content-Type'] = 'application/json; charset=utf-8';
      return { status: failure.status, body: JSON.stringify(failure.toEnvelope()) };
    };
    let answer: { status: number; body: string } | null = null;
    if (path === '/v1' || path.startsWith('/v1/')) {
      const decision = deps.ipLimiter.take(socket.remoteAddress ?? 'unknown', deps.now());
      headers['X-RateLimit-Remaining'] = String(decision.remaining);
      if (!decision.allowed) {
        headers['Retry-After'] = String(decision.retryAfterSeconds);
        answer = envelope(rateLimited(decision.retryAfterSeconds));
      }
    }
    if (answer === null && code === 'HPE_INVALID_METHOD') {
      const allowed = deps.allowedMethods(path);
      if (allowed) {
        headers.Allow = allowed.join(', ');
        answer = { status: 405, body: '' };
      } else answer = envelope(notFound('No endpoint has this path; check the path against /openapi.json.'));
    } else if (answer === null) {
      const reason =
        code === 'HPE_HEADER_OVERFLOW'
          ? `The request headers exceed ${deps.maxHeaderBytes} bytes; send fewer or shorter headers.`
          : `The request cannot be parsed (${error.reason ?? code}); send a well-formed HTTP/1.1 request.`;
      answer = envelope(validationError([{ field: fieldOf(code), message: reason }], reason));
    }
    const { status, body } = answer;
    headers['Content-Length'] = String(Buffer.byteLength(body));
    deps.log.debug({ code, status, remote: socket.remoteAddress }, 'request refused by the HTTP parser');
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? ''}\r\n${head}\r\n${body}`);
  };
}
