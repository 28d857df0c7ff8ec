"""Reading real models' answers: fenced code with prose, near-JSON, missing tests, a file name for code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logomesh.purple.answer import AnswerProblem, entry_point_of, fenced_blocks, parse_answer, split_test_code
from logomesh.tasks.module_check import module_problem

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "data" / "llm_answers"
MODULE = "def add(a, b):\n    return a + b\n"
TESTS = "import unittest\nfrom solution import add\n\n\nclass TestAdd(unittest.TestCase):\n" \
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"


def test_fenced_module_and_tests_with_prose_around_them() -> None:
    answer = (f"Here is my solution:\n\n```python\n{MODULE}```\n\nAnd the tests:\n\n```python\n{TESTS}```\n\n"
              "It adds the two numbers, as asked.")
    parsed = parse_answer(answer, "add")
    assert (parsed.source, parsed.tests, parsed.form) == (MODULE, TESTS, "fenced")
    assert "adds the two numbers" in parsed.rationale and "```" not in parsed.rationale
    assert parsed.notes == ()


def test_tests_block_first_and_labelled_blocks() -> None:
    answer = f"**test_solution.py**\n```py\n{TESTS}```\n**solution.py**\n```\n{MODULE}```\n"
    parsed = parse_answer(answer, "add")
    assert (parsed.source, parsed.tests) == (MODULE, TESTS)


def test_json_with_raw_newlines_inside_its_strings() -> None:
    raw = '{"sourceCode": "' + MODULE + '", "testCode": "", "rationale": "adds"}'
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    parsed = parse_answer(raw, "add")
    assert (parsed.source, parsed.form, parsed.rationale) == (MODULE, "near-json", "adds")
    assert "the answer holds no tests" in parsed.notes


def test_json_with_python_triple_quotes() -> None:
    raw = '```json\n{\n  "sourceCode": """' + MODULE + '""",\n  "testCode": """' + TESTS + '""",\n' \
          '  "rationale": "it adds"\n}\n```'
    parsed = parse_answer(raw, "add")
    assert (parsed.source, parsed.tests, parsed.form) == (MODULE, TESTS, "near-json")


def test_strict_json_still_reads_as_json() -> None:
    raw = json.dumps({"sourceCode": MODULE, "testCode": TESTS, "rationale": "r"})
    assert parse_answer(raw, "add").form == "json"


def test_missing_tests_is_a_module_without_tests_not_a_failure() -> None:
    parsed = parse_answer(f"```python\n{MODULE}```", "add")
    assert (parsed.source, parsed.tests) == (MODULE, "")
    assert parsed.notes == ("the answer holds no tests",)


def test_a_file_name_instead_of_code_is_named_as_such() -> None:
    raw = json.dumps({"sourceCode": "solution.py", "testCode": "test_solution.py", "rationale": "see files"})
    with pytest.raises(AnswerProblem, match=r"sourceCode holds a file name \('solution.py'\) instead of a module "
                                            r"defining `add`") as caught:
        parse_answer(raw, "add")
    assert caught.value.submission is not None and caught.value.submission["sourceCode"] == "solution.py"


def test_a_file_name_with_the_code_in_a_fence_below_takes_the_code() -> None:
    raw = '{"sourceCode": "solution.py", "testCode": "", "rationale": "x"}\n\n```python\n' + MODULE + "```"
    parsed = parse_answer(raw, "add")
    assert parsed.source == MODULE
    assert "sourceCode held no module; took the fenced code block instead" in parsed.notes


def test_top_level_test_code_moves_into_the_tests() -> None:
    code = MODULE + "\n\nassert add(1, 2) == 3\nprint(add(2, 2))\n\nif __name__ == '__main__':\n    print(add(0, 0))\n"
    parsed = parse_answer(f"```python\n{code}```", "add")
    assert "assert" not in parsed.source and "print(add(2, 2))" not in parsed.source
    assert "__main__" in parsed.source  # a main guard does not run at import: it stays
    assert "def test_examples_from_the_answer():\n    assert add(1, 2) == 3" in parsed.tests
    assert "from solution import add" in parsed.tests
    assert parsed.notes[0] == "moved 2 top-level test statement(s) from the module into the tests"


def test_module_and_unittest_class_in_one_block_are_split() -> None:
    code = MODULE + "\n\n" + TESTS.replace("from solution import add\n", "") + "\nunittest.main()\n"
    parsed = parse_answer(f"```python\n{code}```", "add")
    assert module_problem(parsed.source, "add") is None
    assert "class TestAdd" not in parsed.source and "unittest" not in parsed.source
    assert "class TestAdd(unittest.TestCase)" in parsed.tests and "import unittest" in parsed.tests


def test_the_runner_guard_and_imports_only_the_tests_used_leave_the_module() -> None:
    """Issue 34's case: ``import unittest`` moved to the tests, ``unittest.main()`` under the guard stayed."""
    code = ("import math\nimport os\nimport random\nimport sys\nimport unittest\n\n\n" + MODULE.replace(
        "return a + b", "return math.fsum([a, b])") + "\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_random(self):\n        x = random.random()\n        self.assertEqual(add(x, 0), x)\n\n\n"
        "if __name__ == '__main__':\n    sys.exit(unittest.main())\n")
    parsed = parse_answer(f"```python\n{code}```", "add")
    assert parsed.source == "import math\nimport os\n\n\n" + MODULE.replace("return a + b",
                                                                            "return math.fsum([a, b])")
    assert "import random" in parsed.tests and "import sys" in parsed.tests and "import unittest" in parsed.tests
    assert "if __name__ == '__main__':\n    sys.exit(unittest.main())" in parsed.tests
    assert "import math" not in parsed.tests and "import os" not in parsed.tests  # the module's, or nobody's
    assert parsed.notes[0] == "moved 5 top-level test statement(s) from the module into the tests"


@pytest.mark.parametrize("guard", ["    unittest.main()\n", "    unittest.main(verbosity=2)\n",
                                   "    raise SystemExit(pytest.main([__file__]))\n", "    test_add()\n",
                                   "    test_add()\n    unittest.main()\n"])
def test_a_guard_that_only_runs_tests_moves(guard: str) -> None:
    code = (MODULE + "\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\nif __name__ == \"__main__\":\n" + guard)
    kept, moved, _ = split_test_code(code)
    assert kept == MODULE and "__main__" in moved


@pytest.mark.parametrize("guard", ["    print(add(1, 2))\n", "    unittest.main()\nelse:\n    pass\n",
                                   "    unittest.main()\n    print('done')\n", "    main()\n"])
def test_a_guard_that_does_more_than_run_tests_stays(guard: str) -> None:
    code = MODULE + "\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\nif __name__ == '__main__':\n" + guard
    kept, moved, _ = split_test_code(code)
    assert "__main__" in kept and "__main__" not in moved


def test_split_keeps_a_module_whole_when_a_cut_would_break_it() -> None:
    assert split_test_code(MODULE) == (MODULE, "", 0)


def test_module_without_the_entry_point_is_a_problem_with_its_code() -> None:
    with pytest.raises(AnswerProblem, match="no module defining `add`") as caught:
        parse_answer("```python\ndef plus(a, b):\n    return a + b\n```", "add")
    assert caught.value.submission is not None


def test_unparsable_code_says_where() -> None:
    with pytest.raises(AnswerProblem, match=r"does not parse \(.*line 1\)"):
        parse_answer("```python\ndef add(a, b)\n    return a + b\n```", "add")


def test_prose_only_is_a_problem_without_code() -> None:
    with pytest.raises(AnswerProblem, match="no ```python code block") as caught:
        parse_answer("I cannot help with that.", "add")
    assert caught.value.submission is None


def test_an_unclosed_last_fence_runs_to_the_end() -> None:
    blocks, _ = fenced_blocks("text\n```python\n" + MODULE)
    assert len(blocks) == 1 and not blocks[0].closed and blocks[0].body == MODULE
    assert parse_answer("```python\n" + MODULE, "add").source == MODULE


def test_bare_code_without_a_fence() -> None:
    parsed = parse_answer(MODULE, "add")
    assert (parsed.source, parsed.form) == (MODULE, "bare code")


def test_entry_point_comes_from_the_task_prompt() -> None:
    assert entry_point_of("Write one Python module (...) whose public name is `RateLimiter`, plus") == "RateLimiter"
    assert entry_point_of("no name here") is None


def _transcripts() -> list[Path]:
    return sorted(TRANSCRIPTS.glob("*.json"))


@pytest.mark.parametrize("path", _transcripts(), ids=lambda p: p.stem)
def test_recorded_real_model_answers(path: Path) -> None:
    """Answers a real model gave (SmolLM2-135M-Instruct, see tests/data/llm_answers/SOURCE): read as recorded."""
    record = json.loads(path.read_text(encoding="utf-8"))
    expected = record["expect"]
    if expected["usable"]:
        parsed = parse_answer(record["answer"], record["entry_point"])
        assert parsed.form == expected["form"]
        assert module_problem(parsed.source, record["entry_point"]) is None
        assert bool(parsed.tests.strip()) == expected["has_tests"]
    else:
        with pytest.raises(AnswerProblem) as caught:
            parse_answer(record["answer"], record["entry_point"])
        assert expected["reason"] in str(caught.value)
        assert (caught.value.submission is not None) == expected["has_code"]


def test_other_shapes_models_write() -> None:
    crlf = f"Here:\r\n```python\r\n{MODULE}```\r\n".replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    assert parse_answer(crlf, "add").source.replace("\r", "") == MODULE
    indented = "1. The module:\n\n   ```python\n" + "".join("   " + ln for ln in MODULE.splitlines(True)) + "   ```\n"
    assert parse_answer(indented, "add").source == MODULE
    aliased = json.dumps({"code": MODULE, "tests": TESTS, "explanation": "adds"})
    parsed = parse_answer(aliased, "add")
    assert (parsed.source, parsed.tests, parsed.rationale) == (MODULE, TESTS, "adds")
    fenced_in_json = json.dumps({"sourceCode": f"```python\n{MODULE}```", "testCode": "", "rationale": "r"})
    assert parse_answer(fenced_in_json, "add").source == MODULE
    thinking = f"<think>maybe ```python\ndef add(a, b): return 0\n```</think>\n```python\n{MODULE}```"
    assert parse_answer(thinking, "add").source == MODULE


def test_the_entry_point_is_found_in_a_block_that_also_holds_tests() -> None:
    """A real answer's shape: a first block with only an import, the function and its tests in the second."""
    answer = (f"```python\nfrom solution import add\n```\n\n```python\nimport unittest\n\n{MODULE}\n\n"
              "class TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n```")
    parsed = parse_answer(answer, "add")
    assert parsed.source.strip() == MODULE.strip()
    assert "class TestAdd" in parsed.tests


def test_an_answer_cut_off_mid_statement_keeps_what_it_finished() -> None:
    cut = f"```python\n{MODULE}\n\ndef helper(x):\n    return [x,\n"
    parsed = parse_answer(cut, "add")
    assert parsed.source.strip() == MODULE.strip()
    assert parsed.notes[0].startswith("the answer was cut off inside its last code block")
    closed = f"```python\n{MODULE}\n\ndef helper(x):\n    return [x,\n```"
    with pytest.raises(AnswerProblem, match="does not parse"):  # a closed block is what the model meant: not cut
        parse_answer(closed, "add")
