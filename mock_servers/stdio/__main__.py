"""`python -m mock_servers.stdio SCRIPT [options]`: the stdio mock server (see the package)."""

from __future__ import annotations

import sys

from mock_servers.stdio import main

sys.exit(main())
