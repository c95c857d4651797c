#!/usr/bin/env node
// Release check: what a user gets from npm, tried before a release.
//
// 1. Packs every published package (`pnpm pack`, so `workspace:` ranges become
//    versions) and runs @arethetypeswrong/cli (esm-only profile) on each tarball.
// 2. Installs all the tarballs together with npm into a scratch app outside the
//    workspace (no workspace links), type-checks that app under `strict` and
//    `exactOptionalPropertyTypes`, and runs it against PostgreSQL (DATABASE_URL,
//    or the embedded server @iddqueue/testing starts).
//    Then runs the no-registry recipe of docs/getting-started.md ("Before the
//    packages are on npm") as written: its pack commands (into a scratch
//    directory instead of /tmp/iddqueue) must pack every published package,
//    and its `npm i`, in an empty project whose .npmrc points @iddqueue/* at
//    an unreachable registry, must install; every package is then imported
//    from that project and `iddqueue --help` runs. (The recipe's first line,
//    installing and building the workspace, is what precedes this script.)
// 3. Installs each package's tarball alone into its own scratch app, with only
//    the tarballs of the @iddqueue packages it declares (dependencies and
//    required peers, transitively), @iddqueue/* pointed at an unreachable
//    registry so nothing of ours can come from npm, then imports it with Node:
//    a package that needs an undeclared or unpublished sibling fails here.
// 4. Runs `changeset version` and `pnpm publish --recursive --dry-run` in a
//    throwaway worktree, so a release cannot break on the changeset config, a
//    private dependency or a wrong `files` list.
//
// Run after `pnpm build`: `node scripts/release-check.mjs` (pnpm release:check).
import { execFileSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const scratch = mkdtempSync(join(tmpdir(), 'iddqueue-release-'))
const started = Date.now()
const log = (line) =>
  console.log(`[release-check ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}`)

function run(command, args, options = {}) {
  return execFileSync(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    ...options,
  })
}

/**
 * The commands of docs/getting-started.md's "Before the packages are on npm"
 * block: the first (install and build the workspace) is left out; `pack` is
 * the ones after it, run in the clone, down to `install`, the `npm i` run in
 * the user's project.
 */
function docsRecipe(file) {
  const text = readFileSync(file, 'utf8')
  const section = text.indexOf('### Before the packages are on npm')
  const block = /```sh\n([\s\S]*?)```/.exec(section < 0 ? '' : text.slice(section))?.[1]
  const commands = (block ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
  const at = commands.findIndex((line) => /^npm i(nstall)? /.test(line))
  const pack = commands.slice(1, Math.max(at, 1))
  const install = commands[at]
  if (
    !/ build$/.test(commands[0] ?? '') ||
    !pack.some((line) => / pack .*\/tmp\/iddqueue/.test(line)) ||
    !install?.includes('/tmp/iddqueue')
  )
    throw new Error(
      `${relative(root, file)}: expected, under "Before the packages are on npm", the workspace build, commands that pack into /tmp/iddqueue and an npm install of /tmp/iddqueue; update scripts/release-check.mjs with the new recipe`,
    )
  return { pack: pack.join('\n'), install }
}

const published = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
  .filter(({ manifest }) => manifest.private !== true)

try {
  // 1. Pack and check each tarball's types as a consumer's resolver sees them.
  const tarballs = join(scratch, 'tarballs')
  mkdirSync(tarballs)
  const tarballOf = new Map()
  for (const { dir, manifest } of published) {
    if (!existsSync(join(dir, 'dist')))
      throw new Error(`${manifest.name} has no dist/: run pnpm build first`)
    const out = run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: dir })
      .trim()
      .split('\n')
      .pop()
    const tarball = resolve(dir, out)
    tarballOf.set(manifest.name, tarball)
    log(`packed ${manifest.name} -> ${relative(scratch, tarball)}`)
    run(
      join(root, 'node_modules/.bin/attw'),
      [tarball, '--profile', 'esm-only', '--format', 'table-flipped'],
      {
        stdio: 'inherit',
      },
    )
  }

  // 2. A scratch app outside the workspace, installed from the tarballs with npm.
  const app = join(scratch, 'app')
  mkdirSync(app)
  cpSync(join(root, 'scripts/release-check-app'), app, { recursive: true })
  const files = readdirSync(tarballs).map((file) => join(tarballs, file))
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'release-check-app', private: true, type: 'module' }, null, 2),
  )
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const typescript = `typescript@${rootManifest.devDependencies.typescript}`
  const typesNode = `@types/node@${rootManifest.devDependencies['@types/node']}`
  log(`npm install ${files.length} tarballs + kysely, postgres, ${typescript} into a scratch app`)
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...files,
      'kysely@^0.28',
      'postgres@^3.4',
      typescript,
      typesNode,
    ],
    {
      cwd: app,
      stdio: 'inherit',
    },
  )
  log('tsc (strict, exactOptionalPropertyTypes) on the scratch app')
  run(join(app, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: app, stdio: 'inherit' })
  log('running the scratch app')
  run(process.execPath, ['dist/app.js'], { cwd: app, stdio: 'inherit' })

  // 2b. docs/getting-started.md's recipe, as written (only the directory differs).
  const recipe = docsRecipe(join(root, 'docs/getting-started.md'))
  const docsTarballs = join(scratch, 'docs-tarballs')
  const here = (command) => command.replaceAll('/tmp/iddqueue', docsTarballs)
  log(`docs/getting-started.md: ${recipe.pack.replaceAll('\n', '; ')}`)
  run('sh', ['-ec', here(recipe.pack)], { cwd: root, stdio: 'inherit' })
  const packed = readdirSync(docsTarballs).sort()
  const expected = readdirSync(tarballs).sort()
  const unpacked = expected.filter((file) => !packed.includes(file))
  if (unpacked.length > 0 || packed.length !== expected.length)
    throw new Error(
      `docs/getting-started.md packs ${packed.join(', ')}; every published package is ${expected.join(', ')}`,
    )
  const docsApp = join(scratch, 'docs-app')
  mkdirSync(docsApp)
  writeFileSync(
    join(docsApp, 'package.json'),
    JSON.stringify({ name: 'getting-started', private: true, type: 'module' }, null, 2),
  )
  // Anything of ours not among the tarballs would come from here, and fail.
  writeFileSync(
    join(docsApp, '.npmrc'),
    '@iddqueue:registry=http://127.0.0.1:9/\nfetch-retries=0\n',
  )
  log(`docs/getting-started.md: ${recipe.install}`)
  run('sh', ['-ec', here(recipe.install)], { cwd: docsApp, stdio: 'inherit' })
  const names = published.map(({ manifest }) => manifest.name)
  run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `for (const name of ${JSON.stringify(names)}) await import(name)`,
    ],
    { cwd: docsApp, stdio: 'inherit' },
  )
  run(join(docsApp, 'node_modules/.bin/iddqueue'), ['--help'], { cwd: docsApp })
  log(
    `docs/getting-started.md's recipe installs: imported ${names.length} packages, iddqueue --help ran`,
  )

  // 3. Each package alone: its tarball plus the tarballs of the @iddqueue
  //    packages it declares, nothing else of ours (docs/versioning.md lists
  //    what a user installs for each package).
  const manifestOf = new Map(published.map(({ manifest }) => [manifest.name, manifest]))
  /** The @iddqueue packages `name` needs installed: dependencies and non-optional peers, transitively. */
  const closure = (name, seen = new Set()) => {
    if (seen.has(name)) return seen
    const manifest = manifestOf.get(name)
    if (!manifest)
      throw new Error(`${[...seen].at(-1)} declares ${name}, which is not a published package`)
    seen.add(name)
    const optional = manifest.peerDependenciesMeta ?? {}
    const declared = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}).filter((peer) => !optional[peer]?.optional),
    ]
    for (const dep of declared) if (dep.startsWith('@iddqueue/')) closure(dep, seen)
    return seen
  }
  for (const { manifest } of published) {
    const needs = [...closure(manifest.name)]
    const alone = join(scratch, `alone-${manifest.name.replace('@iddqueue/', '')}`)
    mkdirSync(alone)
    writeFileSync(
      join(alone, 'package.json'),
      JSON.stringify({ name: 'release-check-alone', private: true, type: 'module' }, null, 2),
    )
    log(
      `npm install ${manifest.name} alone, with the tarballs of: ${needs.slice(1).join(', ') || 'nothing else'}`,
    )
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--prefer-offline',
        // Anything of ours not given as a tarball would come from here, and fail.
        '--@iddqueue:registry=http://127.0.0.1:9/',
        '--fetch-retries=0',
        ...needs.map((name) => tarballOf.get(name)),
      ],
      { cwd: alone, stdio: 'inherit' },
    )
    const installed = readdirSync(join(alone, 'node_modules', '@iddqueue')).map(
      (n) => `@iddqueue/${n}`,
    )
    const extra = installed.filter((name) => !needs.includes(name))
    if (extra.length > 0)
      throw new Error(`${manifest.name} alone also installed ${extra.join(', ')}`)
    // Importing it loads every module its entry reaches: an undeclared dependency fails here.
    run(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(manifest.name)})`],
      {
        cwd: alone,
        stdio: 'inherit',
      },
    )
  }

  // 4. Version and publish, dry: in a detached worktree of HEAD, with the built dist/ copied in.
  const tree = join(scratch, 'tree')
  run('git', ['worktree', 'add', '--detach', '--quiet', tree, 'HEAD'], { cwd: root })
  try {
    for (const { dir } of published)
      cpSync(join(dir, 'dist'), join(tree, relative(root, dir), 'dist'), { recursive: true })
    run('pnpm', ['install', '--frozen-lockfile', '--offline', '--ignore-scripts', '--silent'], {
      cwd: tree,
      stdio: 'inherit',
    })
    log('changeset version (throwaway worktree)')
    run(join(root, 'node_modules/.bin/changeset'), ['version'], { cwd: tree, stdio: 'inherit' })
    // Pre-1.0, a minor bump of core must not turn its plugins into 1.0.0 (changesets
    // bumps peer dependents a major when the peer range no longer matches).
    const planned = published.map(({ dir, manifest }) => {
      const next = JSON.parse(readFileSync(join(tree, relative(root, dir), 'package.json'), 'utf8'))
      return `${manifest.name} ${manifest.version} -> ${next.version}`
    })
    log(`planned versions: ${planned.join(', ')}`)
    const major = planned.filter((line) => !/ -> 0\./.test(line))
    if (major.length > 0) throw new Error(`a release would reach 1.0.0: ${major.join(', ')}`)
    log('pnpm publish --recursive --dry-run')
    run('pnpm', ['publish', '--recursive', '--dry-run', '--no-git-checks', '--access', 'public'], {
      cwd: tree,
      stdio: 'inherit',
    })
  } finally {
    run('git', ['worktree', 'remove', '--force', tree], { cwd: root })
  }
  log(`ok: ${published.length} packages`)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
