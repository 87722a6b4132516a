"""Kubernetes resource quantities ('500m', '2', '16Gi', '1G', '1e3'), parsed exactly.

Fractions, not floats: '0.1' CPU and '1G' bytes must convert to the IR's
integer units without rounding surprises. The grammar is the one of
k8s.io/apimachinery resource.Quantity: a signed decimal number followed by a
binary suffix (Ki..Ei), a decimal suffix (n, u, m, k, M..E) or an exponent.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:[eE](?P<exponent>[+-]?\d+)|(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<decimal>[numkMGTPE]))?"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(1000),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# Larger exponents are not meaningful quantities, and 10**huge would stall.
_MAX_EXPONENT = 30
MIB = 2**20


def parse_quantity(value: Any) -> Fraction | None:
    """The exact value of a quantity, or None when Kubernetes would reject it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return Fraction(repr(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY.fullmatch(value)
    if match is None:
        return None
    text = match["number"]
    # Most quantities are whole numbers: int's parsing is many times faster than Fraction's.
    number = Fraction(int(text)) if text.isdecimal() else Fraction(text)
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            return None
        return number * Fraction(10) ** exponent
    if match["binary"]:
        return number * _BINARY[match["binary"]]
    if match["decimal"]:
        return number * _DECIMAL[match["decimal"]]
    return number


def to_mib(quantity: Fraction) -> int:
    """Bytes to whole MiB, rounded up so a translated job never gets less memory."""
    return math.ceil(quantity / MIB)


def is_integer(quantity: Fraction) -> bool:
    return quantity.denominator == 1


def format_cpu(quantity: Fraction) -> str:
    """A short text for messages: '2', '500m'."""
    if is_integer(quantity):
        return str(quantity.numerator)
    return f"{math.ceil(quantity * 1000)}m"
