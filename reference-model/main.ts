// Runs the reference model as a standalone server: `node --import tsx reference-model/main.ts --port 8399`.

import { parseArgs } from 'node:util';
import { startReferenceModel } from './reference-model-server.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8399' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: expected an integer from 0 to 65535, got "${values.port}"`);
  process.exit(2);
}

// A long-running server would otherwise keep every request in memory.
const server = await startReferenceModel({ port, host: values.host, recordRequests: false });
console.log(`reference model listening on ${server.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
