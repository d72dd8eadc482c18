#!/usr/bin/env node
// Stages the npm packages of mcp-conform, each with Cargo.toml's version.
//
//   node npm/fill.js platform <os>-<cpu> <binary> <out-dir>
//       <out-dir>/<os>-<cpu>/: the package @mcp-conform-harness/<os>-<cpu> holding the
//       built binary (bin/mcp-conform, or bin/mcp-conform.exe on win32)
//   node npm/fill.js main <out-dir> [<os>-<cpu> ...]
//       <out-dir>/mcp-conform-harness/: the launcher package npm/mcp-conform-harness/; with
//       platforms, its optionalDependencies keep only those (a release lists
//       the platform packages it built, nothing it could not publish)
//   node npm/fill.js sync
//       writes Cargo.toml's version into npm/mcp-conform-harness/package.json (after
//       a version bump; tests/it/packaging.rs checks they agree)
//
// Then `npm pack` or `npm publish` in the staged directory. Plain Node, no
// dependencies. The platforms are the launcher's optionalDependencies.
"use strict";

const fs = require("fs");
const path = require("path");

const root = path.resolve(__dirname, "..");
const launcherDir = path.join(__dirname, "mcp-conform-harness");
const SCOPE = "@mcp-conform-harness/";

function die(message) {
  process.stderr.write(`npm/fill.js: ${message}\n`);
  process.exit(1);
}

/** The `version` of Cargo.toml: its [workspace.package] table's, which
 * every crate of the workspace inherits (or [package]'s, if set there). */
function cargoVersion() {
  const text = fs.readFileSync(path.join(root, "Cargo.toml"), "utf8");
  let inPackage = false;
  for (const line of text.split(/\r?\n/)) {
    const table = line.match(/^\s*\[([^\]]+)\]/);
    if (table) inPackage = ["package", "workspace.package"].includes(table[1].trim());
    const version = inPackage && line.match(/^\s*version\s*=\s*"([^"]+)"/);
    if (version) return version[1];
  }
  return die("Cargo.toml: no version in [workspace.package] or [package]");
}

function readLauncher() {
  return JSON.parse(fs.readFileSync(path.join(launcherDir, "package.json"), "utf8"));
}

/**
 * The launcher's package.json with every version set to `version`, and only
 * the platform packages `only` (all when empty).
 */
function stamped(version, only = []) {
  const manifest = readLauncher();
  const known = Object.keys(manifest.optionalDependencies);
  for (const name of only) {
    if (!known.includes(SCOPE + name)) {
      die(`${SCOPE + name} is not among the optionalDependencies of npm/mcp-conform-harness/package.json`);
    }
  }
  manifest.version = version;
  manifest.optionalDependencies = {};
  for (const name of known) {
    if (only.length === 0 || only.includes(name.slice(SCOPE.length))) {
      manifest.optionalDependencies[name] = version;
    }
  }
  return manifest;
}

function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function fresh(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
}

function platform(name, binary, outDir) {
  const pkg = SCOPE + name;
  const launcher = readLauncher();
  if (!(pkg in launcher.optionalDependencies)) {
    die(`${pkg} is not among the optionalDependencies of npm/mcp-conform-harness/package.json`);
  }
  if (!fs.existsSync(binary)) die(`no binary at ${binary}`);
  const [os, cpu] = name.split("-");
  const version = cargoVersion();
  const dir = path.join(outDir, name);
  fresh(path.join(dir, "bin"));
  const exe = os === "win32" ? "mcp-conform.exe" : "mcp-conform";
  fs.copyFileSync(binary, path.join(dir, "bin", exe));
  // npm keeps the executable bit of packed files; the launcher runs this file.
  fs.chmodSync(path.join(dir, "bin", exe), 0o755);
  writeJson(path.join(dir, "package.json"), {
    name: pkg,
    version,
    description: `The ${os} ${cpu} binary of mcp-conform (installed by the mcp-conform-harness package)`,
    license: launcher.license,
    os: [os],
    cpu: [cpu],
    files: [`bin/${exe}`],
    preferUnplugged: true,
  });
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${pkg}\n\nThe ${os} ${cpu} binary of mcp-conform.\n` +
      "Install `mcp-conform-harness`, not this package: npm picks the platform package for you.\n"
  );
  process.stdout.write(`${dir}\n`);
}

function main(outDir, only) {
  const dir = path.join(outDir, "mcp-conform-harness");
  fresh(path.join(dir, "bin"));
  for (const file of ["bin/mcp-conform.js", "README.md"]) {
    fs.copyFileSync(path.join(launcherDir, file), path.join(dir, file));
  }
  fs.chmodSync(path.join(dir, "bin/mcp-conform.js"), 0o755);
  writeJson(path.join(dir, "package.json"), stamped(cargoVersion(), only));
  process.stdout.write(`${dir}\n`);
}

function sync() {
  writeJson(path.join(launcherDir, "package.json"), stamped(cargoVersion()));
}

const [command, ...args] = process.argv.slice(2);
if (command === "platform" && args.length === 3) {
  platform(args[0], path.resolve(args[1]), path.resolve(args[2]));
} else if (command === "main" && args.length >= 1) {
  main(path.resolve(args[0]), args.slice(1));
} else if (command === "sync" && args.length === 0) {
  sync();
} else {
  die("usage: fill.js platform <os>-<cpu> <binary> <out-dir> | main <out-dir> [<os>-<cpu> ...] | sync");
}
