// Temporary: runs `br analyze` until the lead wires it into cli/main.ts. Delete before commit.
import { Command, CommanderError } from 'commander';
import { registerAnalyzeCommand } from '../cli/analyze-command.js';
import { InputError } from '../contract/problems.js';
const program = new Command('br').exitOverride();
registerAnalyzeCommand(program);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
  else if (error instanceof InputError) { process.stderr.write(`${error.message}\n`); process.exitCode = 2; }
  else { process.stderr.write(`br: ${(error as Error).stack}\n`); process.exitCode = 1; }
}
