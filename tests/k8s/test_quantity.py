"""Kubernetes quantities as the numbers rules compare."""

from __future__ import annotations

import pytest

from k8s.quantity import QuantityError, quantity


@pytest.mark.parametrize(
    ("value", "number"),
    [("80Gi", 80 * 2**30), ("165160m", 165.16), (71, 71.0), ("1.5e3", 1500.0), ("2k", 2000.0)],
)
def test_quantities_read_as_numbers(value: object, number: float) -> None:
    assert quantity(value) == number


@pytest.mark.parametrize("value", ["lots", "1.2.3", "5Qi", "", True])
def test_what_is_not_a_quantity_says_so(value: object) -> None:
    with pytest.raises(QuantityError, match="not a quantity"):
        quantity(value)
