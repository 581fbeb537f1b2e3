// The `br` executable's entry point: runs the CLI on this process's arguments. Kept apart from
// cli/main.ts so that importing the program (tests do) never runs it.

import { endQuietlyWhenStdoutCloses } from './cli-deps.js';
import { main } from './main.js';

// Commander writes help and usage itself, not through CliDeps.stdout.
endQuietlyWhenStdoutCloses();
await main(process.argv);
