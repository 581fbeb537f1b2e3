// Whether the torch routers' image layers are on this host. PyPI's torch for Linux is the CUDA build (about
// 5 GB): their image is built once per host on first use, so their tests run where it is cached, or with
// BENCHROUTER_SLOW_TESTS=1 (which builds it), and are skipped with the reason otherwise.

import { execFileSync } from 'node:child_process';
import { SLOW_TESTS } from './benchmark-image.js';

/** The label the torch routers' Dockerfiles put right after their shared torch layers. */
export const TORCH_LAYERS_LABEL = 'org.benchrouter.router-layers=torch-2.5.1 torch_geometric-2.6.1 routellm-0.2.0';

export function torchLayersCached(): boolean {
  const out = execFileSync('docker', ['images', '--quiet', '--filter', `label=${TORCH_LAYERS_LABEL}`], { encoding: 'utf8' });
  return out.trim().length > 0;
}

export const TORCH_ROUTER_TESTS = SLOW_TESTS || torchLayersCached();
export const TORCH_SKIP_REASON =
  'the torch routers image is not built on this host (PyPI torch is the 5 GB CUDA build): run with BENCHROUTER_SLOW_TESTS=1 to build it, after which these tests run by default';
