// `br serve`: the HTTP API (POST /evals/submit, runs, results, leaderboard, SSE events) and the web
// dashboard, on the same client code as `br`. Tokens come from a tokens file (`br tokens`).

import type { Command } from 'commander';
import { defaultTokensFile, loadTokens, tokenVerifier } from '../../api/api-tokens.js';
import { DEFAULT_API_PORT } from '../../config/settings.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { connectTemporal } from '../temporal-access.js';

interface ServeFlags {
  port?: number;
  host: string;
  tokens?: string;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ExitError(`--port: expected a port number 0-65535, got "${value}"`, EXIT_CODES.BAD_INPUT);
  return n;
}

export function registerServeCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('serve')
    .description('serve the HTTP API and the web dashboard')
    .option('--port <n>', `port to listen on (default $BENCHROUTER_API_PORT or ${DEFAULT_API_PORT}; 0: any free port)`, port)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--tokens <file>', 'the tokens file (default $BENCHROUTER_HOME/api-tokens.json)')
    .addHelpText('after', example('$ br tokens add ci && br serve --port 8391', '$ curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8391/runs'))
    .action(async (flags: ServeFlags) => {
      const settings = deps.settings();
      const tokensFile = flags.tokens ?? defaultTokensFile(settings.home);
      if (loadTokens(tokensFile).length === 0) deps.say(`note: ${tokensFile} has no tokens yet; every request gets 401 until \`br tokens add <name>\``);
      // Fastify and the routes load here: no other command pays for them.
      const { buildApiServer } = await import('../../api/api-server.js');
      const app = await buildApiServer({ client: await connectTemporal(deps, false), settings, verifyToken: tokenVerifier(tokensFile) });
      const address = await app.listen({ port: flags.port ?? settings.apiPort, host: flags.host });
      deps.say(`BenchRouter API and dashboard listening on ${address} (docs ${address}/docs, tokens ${tokensFile})`);
      const stop = () => void app.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
}
