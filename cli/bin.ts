// The `br` executable's entry point: runs the CLI on this process's arguments. Kept apart from
// cli/main.ts so that importing the program (tests do) never runs it.

import { main } from './main.js';

await main(process.argv);
