// `br replay-model`: serve canned completions from an answers file, keyed by a stable hash of each
// request, so that a real benchmark run against it has an exactly known score.

import type { Command } from 'commander';
import { startReplayModel } from '../../reference-model/replay-model-server.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { positiveInt } from '../flag-values.js';

export function registerReplayModelCommand(program: Command, deps: CliDeps): Command {
  return program
    .command('replay-model')
    .description('serve canned answers (JSON Lines: {"messages"|"prompt"|"key"|"match"+"turn", "content"|"tool_calls"}) as an OpenAI-compatible model')
    .requiredOption('--answers <file>', 'the answers file')
    .option('--port <n>', 'port to listen on', positiveInt, 8398)
    .option('--host <address>', 'address to listen on (0.0.0.0 for DinD tasks and --no-gateway runs)', '127.0.0.1')
    .option('--misses <file>', 'append each request it has no answer for to this file, ready to be answered')
    .option('--delay-ms <n>', 'wait this long before each answer, as a real model takes time', positiveInt)
    .addHelpText(
      'after',
      `${example('$ br replay-model --answers answers.jsonl --misses misses.jsonl')}
An unknown request gets a 404 whose message names its key and the answers file. Run a benchmark
once with --misses, write the answers into the misses' lines, and append them to the answers file.
`,
    )
    .action(async (flags: { answers: string; port: number; host: string; misses?: string; delayMs?: number }) => {
      const server = await startReplayModel({
        answersFile: flags.answers,
        port: flags.port,
        host: flags.host,
        ...(flags.misses ? { missesFile: flags.misses } : {}),
        ...(flags.delayMs ? { delayMs: flags.delayMs } : {}),
      });
      deps.say(`replay model listening on ${server.url} (answers ${flags.answers})`);
      await new Promise(() => undefined);
    });
}
