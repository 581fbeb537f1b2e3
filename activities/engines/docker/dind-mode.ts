// DinD mode (`docker: true`): the task's container runs a Docker daemon of its own, in the way this host
// allows (dind-detect.ts), on storage of its own: a clone of the host's prepared image set, or an empty
// directory and the archives to load (dind-image-store.ts), removed with the container.

import { CancelledFailure } from '@temporalio/activity';
import path from 'node:path';
import { dindStorageBytes, discardDindStorage, provideDindStorage } from '../../dind-image-store.js';
import { ensureTaskNetwork } from '../../task-network.js';
import { detectDindMode } from './dind-detect.js';
import type { DockerMode, DockerModeKind, ModeScope } from './modes.js';

export const dindMode: DockerModeKind = { name: 'dind', runs: (task) => task.docker, open: openDindMode };

function openDindMode({ deps, job, image, archives, name, ctx, beatingWhile }: ModeScope): DockerMode {
  const { docker } = deps;
  const storageDir = path.join(deps.dindStorageRoot, name);
  return {
    async start(body) {
      // Its daemon takes docker0's address for a bridge of its own: the host is named by its task-network address.
      const { gateway: hostAddress } = await ensureTaskNetwork(docker);
      const { mode, hostConfig, devicesOpen } = await detectDindMode(docker, image);
      // Preparing an image set the first time takes as long as a `docker load`: heartbeats go on.
      const log = (line: string) => ctx.log.info(`job ${job.jobId}: ${line}`);
      if (devicesOpen) ctx.log.warn(`job ${job.jobId}: its DinD container (${mode}) can open the host's block devices: ${devicesOpen}`);
      const storage = await beatingWhile(
        { preparing: name },
        provideDindStorage(deps, { image, archives, storageDir, runtimeHostConfig: hostConfig, log, signal: ctx.cancellationSignal }),
      ).catch((error: unknown) => {
        if (ctx.cancellationSignal.aborted && ctx.cancellationDetails?.cancelRequested) {
          throw new CancelledFailure(`job ${job.jobId} cancelled while its DinD images were being prepared`);
        }
        throw error;
      });
      const dind = { runtimeHostConfig: hostConfig, runtimeName: mode, storageDir: storage.mountDir, archives: storage.archives, preload: storage.preload };
      return docker.createAndStart(name, body({ dind, hostAddress }));
    },

    heldBytes: () => dindStorageBytes(storageDir),

    async remove(nameOrId) {
      // The container goes first: a DinD daemon's storage may only go once nothing uses it. Its files go
      // in the background: the job's result does not wait for them.
      await docker.remove(nameOrId);
      discardDindStorage(storageDir);
    },
  };
}
