// Raw HTTP/1.1 over a TCP socket: sends bytes no HTTP client would, reads one response.
import net from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed without a response. */
  empty: boolean;
}

/** Sends `request` as is and parses the first response (Content-Length framed); `close` when done. */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) {
        if (socket.destroyed || socket.readableEnded) {
          settled = true;
          resolve({ status: 0, headers: {}, body: '', empty: true });
        }
        return;
      }
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      const body = Buffer.from(text.slice(end + 4), 'latin1');
      if (body.length < length && !socket.readableEnded) return;
      settled = true;
      socket.destroy();
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: body.subarray(0, length).toString('utf8'),
        empty: false,
      });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      if (!settled)
        reject(new Error(`no response within ${timeoutMs} ms to ${JSON.stringify(String(request).slice(0, 80))}`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      finish();
    });
    socket.on('end', finish);
    socket.on('close', () => {
      clearTimeout(timer);
      finish();
    });
    socket.on('error', () => {});
  });
}
