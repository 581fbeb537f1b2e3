// An error that ends `br` with a given exit code and a one-line message (Temporal unreachable: 1,
// an unknown run: 2), as opposed to InputError's list of file, field and expectation.

export class ExitError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}
