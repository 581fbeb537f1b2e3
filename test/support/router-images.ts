// When the torch routers' test runs. PyPI's torch for Linux is the CUDA build (about 5 GB, a cold image build
// of most of an hour on 2 cores) and the test trains three routers (about 15 minutes): it runs with
// `npm run test:slow` (BENCHROUTER_SLOW_TESTS=1), with the larger subsets of the benchmarks' fidelity tests.

import { SLOW_TESTS } from './benchmark-image.js';

export const TORCH_ROUTER_TESTS = SLOW_TESTS;
export const TORCH_SKIP_REASON = 'the torch routers (routellm, graphrouter, routerdc) train in a 5 GB image for about 15 minutes: npm run test:slow runs them';
