"""controls.Tendencies and the 0..1 check every dial goes through."""

from __future__ import annotations

import pytest

from controls import Tendencies, TendencyError
from controls.tendencies import check_tendency


@pytest.mark.parametrize(("value", "expected"), [(0, 0.0), (1, 1.0), ("0.25", 0.25), (0.5, 0.5)])
def test_values_in_range_come_back_as_floats(value: float | str, expected: float) -> None:
    result = check_tendency("beta", value)
    assert result == expected and isinstance(result, float)


@pytest.mark.parametrize("value", [-0.0001, 1.0001, 2, float("nan"), float("inf"), "high", None])
def test_values_out_of_range_raise_a_one_line_error_naming_the_dial(value: object) -> None:
    with pytest.raises(TendencyError) as info:
        check_tendency("gamma", value)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("gamma must be")
    assert "\n" not in message


def test_tendency_error_is_a_value_error() -> None:
    assert issubclass(TendencyError, ValueError)


def test_defaults_are_all_off() -> None:
    assert Tendencies().as_dict() == {"alpha": 0.0, "beta": 0.0, "gamma": 0.0}


def test_tendencies_validate_and_normalize_each_dial() -> None:
    t = Tendencies(alpha=1, beta="0.7", gamma=0.3)  # type: ignore[arg-type]
    assert t.as_dict() == {"alpha": 1.0, "beta": 0.7, "gamma": 0.3}
    with pytest.raises(TendencyError, match=r"^beta"):
        Tendencies(beta=1.5)


def test_tendencies_are_frozen_and_hashable() -> None:
    t = Tendencies(alpha=0.5)
    with pytest.raises(AttributeError):
        t.alpha = 0.9  # type: ignore[misc]
    assert {t: 1}[Tendencies(alpha=0.5)] == 1
