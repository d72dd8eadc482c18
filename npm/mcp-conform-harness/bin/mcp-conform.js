#!/usr/bin/env node
// Runs the mcp-conform binary of this machine's platform package.
//
// The binary ships in one npm package per platform, `@mcp-conform-harness/<os>-<cpu>`
// (e.g. @mcp-conform-harness/linux-x64), each listed in this package's
// optionalDependencies with `os`/`cpu` fields, so npm installs only the one
// that fits (the pattern of esbuild and biome). This file finds it, runs it
// with our arguments and standard streams, and exits as it did.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

const self = require("../package.json");

function fail(message) {
  process.stderr.write(`mcp-conform: ${message}\n`);
  process.exit(1);
}

/** Path of the native binary, or exits with a message saying what to do. */
function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `@mcp-conform-harness/${platform}`;
  const supported = Object.keys(self.optionalDependencies || {});
  if (!supported.includes(pkg)) {
    fail(
      `no prebuilt binary for ${platform} (there are: ${supported
        .map((p) => p.replace("@mcp-conform-harness/", ""))
        .join(", ")}); install from source with \`cargo install --locked mcp-conform-harness\``
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    fail(
      `the platform package ${pkg} is not installed, so there is no binary to run. ` +
        `npm skips it when optional dependencies are omitted (--omit=optional, --no-optional) ` +
        `or when a lock file was made on another platform; reinstall without omitting them, ` +
        `or add it: npm install ${pkg}@${self.version}`
    );
  }
  const theirs = require(manifest).version;
  if (theirs !== self.version) {
    process.stderr.write(
      `mcp-conform: warning: ${pkg} is ${theirs}, this launcher is ${self.version}; reinstall mcp-conform-harness\n`
    );
  }
  const exe = process.platform === "win32" ? "mcp-conform.exe" : "mcp-conform";
  const binary = path.join(path.dirname(manifest), "bin", exe);
  if (!fs.existsSync(binary)) {
    fail(`${pkg} is installed but has no ${path.join("bin", exe)} (${binary}); reinstall it`);
  }
  return binary;
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });

// Signals meant for mcp-conform (a CI runner's SIGTERM, a terminal's SIGINT)
// reach the launcher: pass them on and let the binary decide how to stop.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}

child.on("error", (err) => fail(`cannot run ${child.spawnfile}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that callers see what the binary saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
