'use strict';
// Loads the addon built for this platform: `skilldeck.<triple>.node` next to
// this file (the package ships linux-x64-gnu; `napi build --platform` in
// crates/skilldeck-node builds another, see docs/node.md).
const { join } = require('node:path');
const { existsSync } = require('node:fs');

function triple() {
  const { platform, arch } = process;
  if (platform !== 'linux') return `${platform}-${arch}`;
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  const glibc = report && report.header && report.header.glibcVersionRuntime;
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
}

const file = join(__dirname, `skilldeck.${triple()}.node`);
if (!existsSync(file)) {
  throw new Error(
    `skilldeck: no native addon for ${triple()} (looked for ${file}). ` +
      'The npm package ships linux-x64-gnu; for another platform build it from the ' +
      'repository: cd crates/skilldeck-node/npm && npx napi build --platform --release ' +
      '--manifest-path ../Cargo.toml --output-dir . (see docs/node.md).',
  );
}
module.exports = require(file);
