"""CEL, the expression language of Kubernetes' own validation rules, evaluated directly on
the bundle's JSON objects. See syntax.py (the grammar), runtime.py (operators and standard
functions) and program.py (evaluation, and functions defined in CEL)."""

from .program import BUDGET, CelCompileError, Function, Program, compile
from .runtime import GLOBAL, CelError, Unknown
from .syntax import CelSyntaxError

# The names of CEL's own global functions (size, int, string, ...).
STANDARD_FUNCTIONS = frozenset(GLOBAL)

__all__ = [
    "BUDGET",
    "STANDARD_FUNCTIONS",
    "CelCompileError",
    "CelError",
    "CelSyntaxError",
    "Function",
    "Program",
    "Unknown",
    "compile",
]
