#!/usr/bin/env bash
# The official MCP TypeScript SDK pinned in scripts/e2e/mcp-ts-client
# (package-lock.json) with its client script, installed into
# .e2e/mcp-ts-client for harness/mcpserver's TestE2ETypeScriptSDK.
set -euo pipefail
cd "$(dirname "$0")/../../.."
exec scripts/e2e/lib/npm-pinned.sh scripts/e2e/mcp-ts-client mcp-ts-client test -f node_modules/@modelcontextprotocol/sdk/package.json
