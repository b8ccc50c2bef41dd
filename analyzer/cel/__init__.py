"""CEL, the expression language of Kubernetes' own validation rules, evaluated directly on
the bundle's JSON objects. See syntax.py (the grammar), runtime.py (operators and standard
functions) and program.py (evaluation)."""

from .program import BUDGET, CelCompileError, Program, compile
from .runtime import CelError, Unknown
from .syntax import CelSyntaxError

__all__ = [
    "BUDGET",
    "CelCompileError",
    "CelError",
    "CelSyntaxError",
    "Program",
    "Unknown",
    "compile",
]
