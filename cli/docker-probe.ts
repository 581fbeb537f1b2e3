// The Docker side of `br doctor`, on the worker's own DockerEngine: kept this small on purpose, so
// that it follows the engine class wherever that goes.

import { DockerEngine } from '../activities/docker-engine.js';
import type { DockerProbe } from '../client/doctor.js';

export function dockerProbe(engine = new DockerEngine()): DockerProbe {
  return {
    async info() {
      const [info, version] = await Promise.all([engine.api('GET', '/info'), engine.api('GET', '/version')]);
      if (info.status !== 200) throw new Error(`GET /info answered ${info.status}: ${info.body.toString().slice(0, 200)}`);
      const i = JSON.parse(info.body.toString()) as { ServerVersion?: string; DockerRootDir?: string; Driver?: string };
      const v = version.status === 200 ? (JSON.parse(version.body.toString()) as { ApiVersion?: string }) : {};
      return { version: i.ServerVersion ?? '?', apiVersion: v.ApiVersion ?? '?', rootDir: i.DockerRootDir ?? '/var/lib/docker', storageDriver: i.Driver ?? '?' };
    },
    async imageLabels(image) {
      return (await engine.inspectImage(image))?.labels;
    },
  };
}
