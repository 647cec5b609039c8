import { buildBaseImage, type BaseImageSpec } from '../../env/base_images.ts';
import { BASE_IMAGES, baseImageName } from '../../env/images.ts';
import { GymError } from '../../errors.ts';
import { dockerClient } from '../../sandbox/docker/index.ts';
import type { CliCommand } from '../command.ts';
import { parseFlags } from '../options.ts';

const USAGE = `benchgym images: the base images of the Docker sandbox

Usage:
  benchgym images base [--python 3.11,3.9] [--java 17] [--all] [--from debootstrap|registry] [--force]
  benchgym images list                                base images present in the Docker engine (the default)

Options (base):
  --python V,V       Python base images to build (default 3.11 when neither --python nor --java is given)
  --java V,V         Java base images to build (default 17 likewise)
  --all              every Python and Java version known
  --from SOURCE      debootstrap (default: built from Debian packages) or registry (pulled)
  --force            build again even when the image is present

Example:
  benchgym images base --python 3.11 --java 17
`;

export const imagesCommand: CliCommand = {
  name: 'images',
  summary: 'build (base) or list (list) the Docker sandbox base images',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseFlags(args, {
      python: { type: 'string' },
      java: { type: 'string' },
      from: { type: 'string' },
      force: { type: 'boolean' },
      all: { type: 'boolean' },
    });
    const sub = positionals[0] ?? 'list';
    const docker = dockerClient();
    if (sub === 'list') {
      for (const kind of ['python', 'java'] as const) {
        for (const version of Object.keys(BASE_IMAGES[kind])) {
          const tag = baseImageName(kind, version);
          const info = await docker
            .getImage(tag)
            .inspect()
            .catch(() => null);
          process.stdout.write(`${tag}\t${info ? `${Math.round(info.Size / 1e6)} MB` : 'missing'}\n`);
        }
      }
      return 0;
    }
    if (sub !== 'base') throw new GymError('INVALID_ARGUMENT', `unknown images command '${sub}' (base or list)`);
    const from = values.from ?? 'debootstrap';
    if (from !== 'debootstrap' && from !== 'registry')
      throw new GymError('INVALID_ARGUMENT', `invalid --from: '${from}' (debootstrap or registry)`);
    const specs: BaseImageSpec[] = [];
    const pythons = values.all
      ? Object.keys(BASE_IMAGES.python)
      : (values.python ?? (values.java ? '' : '3.11')).split(',').filter(Boolean);
    const javas = values.all ? Object.keys(BASE_IMAGES.java) : (values.java ?? (values.python ? '' : '17')).split(',').filter(Boolean);
    for (const version of pythons) specs.push({ kind: 'python', version });
    for (const version of javas) specs.push({ kind: 'java', version });
    for (const spec of specs) {
      const t0 = Date.now();
      const { tag, built } = await buildBaseImage(docker, spec, {
        from,
        force: values.force,
        onLine: (l) => process.stderr.write(`  ${l}\n`),
      });
      process.stdout.write(`${tag}\t${built ? `built in ${((Date.now() - t0) / 1000).toFixed(0)} s` : 'present'}\n`);
    }
    return 0;
  },
};
