"""The server the recordings beside this file were made from (the mcp Python SDK).

    mcp-testbench record --out calculator.json --stdio -- python calculator_server.py

with the SDK's client in front (`Client(..., mode="legacy")` for calculator.json, at
2025-11-25; the default mode for calculator-2026.json) listing the tools, then calling
add(2, 3) and negate(7).
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("calculator")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def negate(n: int) -> int:
    """The number with its sign flipped."""
    return -n


if __name__ == "__main__":
    server.run("stdio")
