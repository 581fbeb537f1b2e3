// Whether a server speaks TLS, for saying why a connection failed: a frontend that requires TLS
// answers a plain gRPC client with nothing but a timeout ("Failed to connect before the deadline"),
// and a plain frontend answers a TLS client the same way.

import { isIP } from 'node:net';
import tls from 'node:tls';

/** True when `host:port` completes (or refuses for want of a certificate) a TLS handshake; false otherwise. */
export function speaksTls(address: string, timeoutMs = 3000): Promise<boolean> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  return new Promise((resolve) => {
    // Nothing is trusted or sent over this socket: it only asks whether the other side answers in TLS.
    const socket = tls.connect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2'], ...(isIP(host) ? {} : { servername: host }) });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('secureConnect', () => done(true));
    // A TLS alert (certificate required, handshake failure) is TLS too; "wrong version number" and resets are not.
    socket.once('error', (error: NodeJS.ErrnoException) => done(/^ERR_SSL_(TLSV1|SSLV3)_ALERT/.test(error.code ?? '')));
    socket.setTimeout(timeoutMs, () => done(false));
  });
}
