/** See cli/source-tree-hash.mjs. */
export function sourceTreeHash(root: string, alsoHashed: string[]): string;
