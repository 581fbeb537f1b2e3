// The "Example:" section every command's --help ends with.

export function example(...lines: string[]): string {
  return `\nExample:\n${lines.map((line) => `  ${line}`).join('\n')}\n`;
}
