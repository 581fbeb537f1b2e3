// The Docker side of `br doctor`, on the worker's own DockerEngine: kept this small on purpose, so
// that it follows the engine class wherever that goes.

import { DockerEngine } from '../activities/docker-engine.js';
import type { DockerProbe } from '../workers/doctor.js';

export function dockerProbe(engine = new DockerEngine()): DockerProbe {
  return {
    async info() {
      const [info, version] = await Promise.all([
        engine.client.info() as Promise<{ ServerVersion?: string; DockerRootDir?: string; Driver?: string }>,
        engine.client.version(),
      ]);
      return {
        version: info.ServerVersion ?? '?',
        apiVersion: version.ApiVersion ?? '?',
        rootDir: info.DockerRootDir ?? '/var/lib/docker',
        storageDriver: info.Driver ?? '?',
      };
    },
    async imageLabels(image) {
      return (await engine.inspectImage(image))?.labels;
    },
  };
}
