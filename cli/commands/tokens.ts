// `br tokens`: the API's bearer tokens. A token is printed once when made; the file keeps its sha256.

import type { Command } from 'commander';
import { addToken, defaultTokensFile, loadTokens, removeToken } from '../../api/api-tokens.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';

export function registerTokensCommand(program: Command, deps: CliDeps): Command {
  const tokens = program.command('tokens').description('manage the bearer tokens of `br serve`');
  const fileOf = (flags: { tokens?: string }) => flags.tokens ?? defaultTokensFile(deps.settings().home);
  tokens
    .command('add')
    .description('make a token and print it (only this once)')
    .argument('<name>', 'who or what uses it, e.g. ci')
    .option('--read-only', 'the token may only GET')
    .option('--tokens <file>', 'the tokens file (default $BENCHROUTER_HOME/api-tokens.json)')
    .addHelpText('after', example('$ br tokens add ci', '$ br tokens add grafana --read-only'))
    .action(async (name: string, flags: { readOnly?: boolean; tokens?: string }) => {
      const token = addToken(fileOf(flags), name, flags.readOnly === true);
      deps.say(`token "${name}"${flags.readOnly ? ' (read-only)' : ''} added to ${fileOf(flags)}; it is shown once:`);
      await deps.stdout(`${token}\n`);
    });
  tokens
    .command('list')
    .description('list token names and kinds (never the tokens)')
    .option('--tokens <file>', 'the tokens file')
    .action(async (flags: { tokens?: string }) => {
      await deps.stdout(
        loadTokens(fileOf(flags))
          .map((t) => `${t.name}\t${t.readOnly ? 'read-only' : 'full'}\t${t.createdAt}\n`)
          .join(''),
      );
    });
  tokens
    .command('remove')
    .description('revoke a token by name')
    .argument('<name>')
    .option('--tokens <file>', 'the tokens file')
    .action((name: string, flags: { tokens?: string }) => {
      if (!removeToken(fileOf(flags), name)) throw new ExitError(`no token named "${name}" in ${fileOf(flags)}`, EXIT_CODES.BAD_INPUT);
      deps.say(`token "${name}" removed`);
    });
  return tokens;
}
