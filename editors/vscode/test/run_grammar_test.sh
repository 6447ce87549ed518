#!/usr/bin/env bash
# The VS Code grammar test: installs the pinned dev dependencies
# (package-lock.json) into editors/vscode/node_modules and runs
# vscode-tmgrammar-test over test/*.shd. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund --loglevel=error
npm test --silent
