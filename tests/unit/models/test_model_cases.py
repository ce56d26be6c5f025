"""Every case of `tests/unit/models/<model>.yaml`: the model built over the given rows gives the expected ones."""

from __future__ import annotations

import pytest

from tests.unit.models.model_cases import Case, assert_rows, load_cases, run_case

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{case.model}: {case.name}" for case in CASES])
def test_model_case(case: Case, tmp_path):
    assert_rows(case, run_case(case, tmp_path))


def test_a_wrong_expectation_fails(tmp_path):
    """The runner is no test that cannot fail: a case whose expected row is off by one is reported."""
    case = next(case for case in CASES if case.model == "int_health_findings__disk")
    wrong = Case(case.model, case.name, case.given, [{**case.expect[0], "iteration": 99}], case.params, case.build,
                 case.cte, case.file)
    with pytest.raises(pytest.fail.Exception, match="expected and not found"):
        assert_rows(wrong, run_case(wrong, tmp_path))


def test_a_typo_in_a_case_is_an_error_not_a_pass(tmp_path):
    """A given column, a given relation or an expected column the model does not have is named, not ignored."""
    case = next(case for case in CASES if case.model == "int_health_findings__disk")
    typo = Case(case.model, "typo", {"host_iteration_stats": [{"cpu_wait_avgg": 1}]}, case.expect, case.params)
    with pytest.raises(ValueError, match="cpu_wait_avgg"):
        run_case(typo, tmp_path)
    stranger = Case(case.model, "stranger", {"container_stats": []}, case.expect, case.params)
    with pytest.raises(ValueError, match="not upstream of int_health_findings__disk"):
        run_case(stranger, tmp_path)
    wrong_column = Case(case.model, case.name, case.given, [{**case.expect[0], "severty": "ok"}], case.params,
                        case.build, case.cte, case.file)
    with pytest.raises(ValueError, match="severty"):
        assert_rows(wrong_column, run_case(wrong_column, tmp_path / "again"))
