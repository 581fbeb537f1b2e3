// Parsers for flag values that commander checks as it reads them, so a bad number is refused naming its flag.

import { InvalidArgumentError } from 'commander';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return n;
}
