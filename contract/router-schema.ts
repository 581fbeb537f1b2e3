// The router contract (docs/routing-analysis.md, "Routers"): a directory with a Dockerfile and a
// router.yaml, read here. Error texts are written for router authors, as the benchmark contract's are.

import { z } from 'zod';
import { DEFAULT_RESOURCES, expecting, ResourcesSchema } from './benchmark-schema.js';

export const DEFAULT_ROUTER_TIMEOUT_SECONDS = 3600;

const flag = z.boolean(expecting('true or false')).default(false);

/** What a router needs from BenchRouter; it is refused a run that cannot give it. */
export const RouterNeedsSchema = z.strictObject(
  {
    /** Query embeddings: BENCHROUTER_MODEL_ENDPOINT is an OpenAI-compatible embeddings endpoint (through the gateway). */
    embeddings: flag,
    /** Per-record costs in the exported training records (a cost-aware router). */
    costs: flag,
    /** Exactly two models (a strong and a weak one), as HybridLLM and RouteLLM route between. */
    pair: flag,
  },
  expecting('a mapping of embeddings, costs, pair (each true or false)'),
);

export const RouterYamlSchema = z.strictObject(
  {
    name: z.string(expecting('a router name')).regex(/^[a-z0-9][a-z0-9._-]*$/, expecting('a lower-case name of letters, digits, ".", "_" or "-"')),
    description: z.string(expecting('a string')).optional(),
    /** The paper the method comes from, shown with its rows. */
    paper: z.string(expecting('a citation or URL')).optional(),
    command: z.string(expecting('a shell command string')).min(1, expecting('a non-empty shell command')),
    timeout: z.number(expecting('a positive number of seconds')).positive(expecting('a positive number of seconds')).default(DEFAULT_ROUTER_TIMEOUT_SECONDS),
    needs: RouterNeedsSchema.default({ embeddings: false, costs: false, pair: false }),
    resources: ResourcesSchema.default({ memory: DEFAULT_RESOURCES.memory, cpus: DEFAULT_RESOURCES.cpus, disk: DEFAULT_RESOURCES.disk }),
  },
  expecting('a mapping with name and command'),
);

export type RouterYaml = z.infer<typeof RouterYamlSchema>;
export type RouterNeeds = z.infer<typeof RouterNeedsSchema>;

/** A loaded router directory. Plain data. */
export interface RouterDefinition {
  name: string;
  description: string;
  paper?: string;
  /** Absolute path of the router directory: the Docker build context. */
  dir: string;
  command: string;
  timeoutSeconds: number;
  needs: RouterNeeds;
  resources: { memory: string; cpus: number; pids: number; disk: string };
}
