// `br images save`: archive host images into the preload cache, for DinD tasks' docker_images.

import type { Command } from 'commander';
import { resolveHostId } from '../../workers/host-id.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';

export function registerImagesCommand(program: Command, deps: CliDeps): Command {
  const images = program.command('images').description('image archives preloaded into DinD tasks');
  images
    .command('save')
    .description("write archives of host images into the preload cache, for tasks' docker_images")
    .argument('<image...>', 'image references on this host')
    .option('--json', 'print the archive paths as JSON')
    .addHelpText('after', example('$ br images save postgres:16 benchrouter-test/inner-service:1'))
    .action(async (refs: string[], flags: { json?: boolean }) => {
      const settings = deps.settings();
      // dockerode loads here: no other command pays for it.
      const [{ DockerEngine }, { ensureImageArchive }] = await Promise.all([
        import('../../activities/docker-engine.js'),
        import('../../activities/preload-images.js'),
      ]);
      const docker = new DockerEngine();
      const hostId = resolveHostId(settings.home);
      const missing: string[] = [];
      for (const image of refs) if (!(await docker.imageExists(image))) missing.push(image);
      if (missing.length)
        throw new ExitError(`not on this host's Docker daemon: ${missing.join(', ')} (nothing is pulled; build or load them first)`, EXIT_CODES.BAD_INPUT);
      const saved: Array<{ image: string; archive: string }> = [];
      for (const image of refs) {
        saved.push({ image, archive: await ensureImageArchive({ docker, imageCacheDir: settings.imageCacheDir, locksDir: settings.locksDir }, hostId, image) });
      }
      if (flags.json) await deps.stdout(`${JSON.stringify(saved, null, 2)}\n`);
      else for (const { image, archive } of saved) await deps.stdout(`${image}\t${archive}\n`);
    });
  return images;
}
