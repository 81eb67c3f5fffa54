"""Building the Java driver kit (examples/drivers/java) for the tests that run it.

Outside CI a machine without `javac` skips those tests, saying why; under CI (the `CI`
environment variable set, as CI services do) a missing `javac` fails them: .ci/run
installs a JDK when there is none, so a skip there would hide a broken build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _machine import within

__all__ = ["DRIVER_CLASS", "KIT", "build_kit", "driver_argv", "require_java"]

KIT = Path(__file__).resolve().parent.parent / "examples" / "drivers" / "java"
DRIVER_CLASS = "smallclient.SmallClientDriver"
BUILD_BOUND = within(180)  # seconds for javac on a loaded machine (it takes a few)


def require_java() -> tuple[str, str]:
    """The paths of `javac` and `java`; a skip (a failure under CI) when they are missing."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is not None and java is not None:
        return javac, java
    missing = "javac" if javac is None else "java"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
        pytest.fail(
            f"{missing} is not on PATH under CI: the Java driver kit must be built and run "
            "there (.ci/run installs a JDK with apt-get when javac is missing)"
        )
    pytest.skip(f"{missing} is not on PATH: install a JDK (9 or newer) to test the Java kit")


def build_kit(dest: Path) -> Path:
    """Compiles every source of the kit into `dest` at Java 8 source level, warnings as
    errors; returns `dest` (the class path)."""
    javac, _ = require_java()
    sources = sorted(str(p) for p in (KIT / "src").glob("*/*.java"))
    assert sources, f"no Java sources under {KIT / 'src'}"
    done = subprocess.run(
        [javac, "--release", "8", "-Xlint:all", "-Werror", "-d", str(dest), *sources],
        capture_output=True,
        text=True,
        timeout=BUILD_BOUND,
        check=False,
    )
    assert done.returncode == 0, f"javac failed:\n{done.stdout}{done.stderr}"
    return dest


def driver_argv(classes: Path) -> list[str]:
    """The command that starts the small client's driver from compiled `classes`."""
    _, java = require_java()
    return [java, "-cp", str(classes), DRIVER_CLASS]
