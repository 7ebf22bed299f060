"""The read-only guard and the ordered validator chain."""

from t2c_lib.validation.base import ValidationContext, Validator
from t2c_lib.validation.chain import build_chain, default_chain, make_context, run_chain
from t2c_lib.validation.guard import ReadOnlyGuard, check_read_only

__all__ = [
    "ReadOnlyGuard",
    "ValidationContext",
    "Validator",
    "build_chain",
    "check_read_only",
    "default_chain",
    "make_context",
    "run_chain",
]
