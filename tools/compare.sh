#!/bin/sh
# Regenerate docs/compare.md and docs/compare.html: the reference client, the official
# Python SDK (mcp), fastmcp and the official TypeScript SDK (through its example driver),
# each run in turn (the runs share the machine; one at a time keeps time-outs honest),
# then `mcp-testbench compare` over their JSON reports. From the root of a checkout with
# mcp-testbench[mcp,fastmcp] installed and Node 20: `sh tools/compare.sh`.
# Each client's HTML report (the evidence every cell links to) stays in docs/compare/,
# beside its JSON report (not committed: large, and only the input of compare). Set
# MCP_TESTBENCH to another command to run a different installation.
set -eu
out=docs/compare
bench=${MCP_TESTBENCH:-mcp-testbench}
mkdir -p "$out"
npm ci --prefix examples/drivers/typescript-sdk --no-audit --no-fund >/dev/null
run() {
    name=$1
    shift
    # A failing check makes the run exit 1: that is a finding to show, not an error here.
    $bench run "$@" --no-report --report "$out/$name.json" --report "$out/$name.html" >"$out/$name.log" 2>&1 || true
    test -s "$out/$name.json" || { echo "no report for $name: see $out/$name.log" >&2; exit 1; }
    rm -f "$out/$name.log"
    echo "ran $name"
}
run reference
run mcp --client harness.clients._sdk_mcp:McpSdkClient
run fastmcp --client harness.clients._sdk_fastmcp:FastMcpClient
run typescript-sdk --driver "node examples/drivers/typescript-sdk/driver.mjs"
$bench compare "$out/reference.json" "$out/mcp.json" "$out/fastmcp.json" \
    "$out/typescript-sdk.json" --html docs/compare.html --markdown docs/compare.md
printf '\nRegenerated from fresh runs by `sh tools/compare.sh` (see tools/README.md).\n' >>docs/compare.md
