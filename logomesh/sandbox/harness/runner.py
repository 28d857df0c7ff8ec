"""The purple agent's own tests, run in the code's process, which only answers. Stdlib only.

Runs INSIDE the sandbox, in the answerer (``answerer.py``) of a ``suite`` run:
the answerer executes this source and asks ``prepare`` for a ``Suite`` before
anything untrusted is imported. The tests and the code they import share
this process, so whatever it says of a test is the code's answer. It holds
no channel, no nonce and no record the host reads: the driver, in a process
of its own, asks ``imported`` once and ``test <name>`` per test over the
wire and records each answer as what the code's process answered (a
malformed answer is an error, a dead process a crash).

What it answers for one test: ``[status, reason, tamper]``, status one of
passed, failed or error. Before and after every test it compares unittest's
classes, the test classes and the test modules' functions with what it
compiled itself from the test files before importing anything; a difference
is listed in ``tamper`` (the server then fails the test and every later one).
This catches a submission that patches the test machinery in passing; one
that rewrites this module's state can only change its own answers, which is
no more than writing weaker tests would.

pytest: when a test file names pytest anywhere (at top level or inside a
test) or has a test that takes arguments (fixtures such as ``tmp_path``), and
the box has pytest (the image's site-packages, put on the path before the
submission's folder), pytest is imported before the first untrusted import,
collects the tests (fixtures, ``parametrize``, ``raises``, marks) and hands
its test loop to the answerer's serving loop through a plugin: a test id's
items (one per parameter set) run when the driver asks, and their reports
make one answer.
"""

from __future__ import annotations

import builtins
import os
import sys
import traceback
import types
import unittest
import unittest.case
import unittest.result
from collections.abc import Callable
from typing import Any

VERDICT_NAMES = frozenset({
    "setUp", "tearDown", "setUpClass", "tearDownClass", "setUpModule", "tearDownModule", "load_tests",
    "run", "debug", "__call__", "__init__", "__getattribute__", "__getattr__", "__init_subclass__", "id",
    "_callSetUp", "_callTestMethod", "_callTearDown", "_callCleanup", "doCleanups", "doClassCleanups",
    "defaultTestResult", "_addSkip", "_feedErrorsToResult", "subTest", "fail", "failureException",
})
TRUSTED_WRAPPERS = ("unittest", "functools", "contextlib")  # decorators (mock.patch...) a test may wear
_MISSING = object()


def prepare(config: dict[str, Any]) -> Suite:
    """Compile the test files, import pytest if they need it, then the tests (and so the code)."""
    compiled, wants_pytest = _compile(config["tests_dir"], config["files"])
    sys.path.insert(0, config["tests_dir"])  # the submission's folder last: nothing it writes shadows ours
    pytest_module = _import_pytest() if wants_pytest else None
    sys.path.append(config["sol_dir"])
    sys.dont_write_bytecode = True
    integrity = Integrity(compiled)  # the test machinery as it is before anything untrusted runs
    return Suite(config, integrity, pytest_module)


def _compile(tests_dir: str, files: list[str]) -> tuple[dict[str, dict[str, list[types.CodeType]]], bool]:
    """Every function's code object per module (by qualified name), and whether any test needs pytest."""
    compiled: dict[str, dict[str, list[types.CodeType]]] = {}
    wants_pytest = False
    for file_name in files:
        path = os.path.join(tests_dir, file_name)
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        codes: dict[str, list[types.CodeType]] = {}
        try:
            stack = [compile(source, path, "exec", dont_inherit=True)]
        except SyntaxError:
            stack = []
        while stack:
            code = stack.pop()
            wants_pytest = wants_pytest or _needs_pytest(code)
            for const in code.co_consts:
                if isinstance(const, types.CodeType):
                    codes.setdefault(const.co_qualname, []).append(const)
                    stack.append(const)
        compiled[file_name[:-3]] = codes
    return compiled, wants_pytest


def _needs_pytest(code: types.CodeType) -> bool:
    """The code names pytest (at top level or inside a test), or is a test that asks for fixtures."""
    if "pytest" in code.co_names:
        return True
    name = code.co_qualname.rsplit(".", 1)[-1]
    return name.startswith("test") and code.co_argcount > (1 if "." in code.co_qualname else 0)


def _import_pytest() -> Any:
    """pytest from the image, imported before anything untrusted (None when the box has none: the test
    modules' own import then fails and says so)."""
    import importlib
    import site

    sys.path.extend(d for d in site.getsitepackages() if os.path.isdir(d) and d not in sys.path)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        return importlib.import_module("pytest")
    except ImportError:
        return None


def _reason_of(text: object) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "error")[:500]


def _exc_line(err: Any) -> str:
    """``Type: first line of the message`` for an exc_info triple."""
    try:
        message = str(err[1]).strip().splitlines()
        name = getattr(err[0], "__name__", "Exception")
        return (f"{name}: {message[0]}" if message else name)[:500]
    except BaseException:
        return "an exception whose message cannot be shown"


class Recorder(unittest.TestResult):
    """Keeps the first failure's exception, for a one-line reason."""

    def __init__(self) -> None:
        super().__init__()
        self.first: Any = None

    def addFailure(self, test: Any, err: Any) -> None:
        self.first = self.first or err
        super().addFailure(test, err)

    def addError(self, test: Any, err: Any) -> None:
        self.first = self.first or err
        super().addError(test, err)

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        if err is not None:
            self.first = self.first or err
        super().addSubTest(test, subtest, err)


class Integrity:
    """What the test machinery and the test modules were right after import, and what changed since."""

    def __init__(self, compiled: dict[str, dict[str, list[types.CodeType]]]) -> None:
        self.compiled = compiled
        self.modules: dict[str, Any] = {}  # the test modules, once imported
        self.unittest_module = unittest
        guarded = (unittest.TestCase, unittest.TestResult, unittest.case._Outcome, Recorder)  # type: ignore[attr-defined]
        self.classes = {cls: dict(vars(cls)) for cls in guarded}
        self.namespaces = {m: dict(vars(m)) for m in (unittest, unittest.case, unittest.result, builtins)}
        self.baselines: dict[str, dict[str, Any]] = {}  # a test module or class -> its names right after import

    def problems(self) -> list[str]:
        found = []
        for cls, before in self.classes.items():
            now = vars(cls)
            found += [f"{cls.__name__}.{k} was replaced" for k in set(before) | set(now)
                      if before.get(k) is not now.get(k)]
        for module, names in self.namespaces.items():
            now = vars(module)
            found += [f"{module.__name__}.{k} was replaced" for k, v in names.items() if now.get(k) is not v]
        if sys.gettrace() is not None:
            found.append("a trace hook was installed (sys.settrace)")
        if sys.getprofile() is not None:
            found.append("a profile hook was installed (sys.setprofile)")
        if sys.modules.get("unittest") is not self.unittest_module:
            found.append("sys.modules['unittest'] was replaced")
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                found.append(f"test module {name} was replaced")
            found += self._namespace(name, name, vars(module))
            for key, value in list(vars(module).items()):
                if isinstance(value, type) and value.__module__ == name:
                    found += self._namespace(name, f"{name}.{key}", vars(value))
        return found

    def _namespace(self, module: str, label: str, namespace: Any) -> list[str]:
        """Verdict-relevant names and the tests' own functions must stay the test file's code."""
        found = []
        before = self.baselines.setdefault(label, dict(namespace))
        for attr in set(before) | set(namespace):
            old, new = before.get(attr, _MISSING), namespace.get(attr, _MISSING)
            was_ours = old is not _MISSING and self._from_file(module, old)
            if not (attr.startswith("test") or attr in VERDICT_NAMES or was_ours):
                continue
            if new is _MISSING:
                found.append(f"{label}.{attr} was deleted")
            elif callable(new) or hasattr(new, "__func__"):
                if not self._from_file(module, new) and (new is not old or attr.startswith("test")):
                    found.append(f"{label}.{attr} is not the test file's code")
            elif new is not old:
                found.append(f"{label}.{attr} was replaced")
        return found

    def _from_file(self, module: str, value: Any) -> bool:
        """``value`` is a function compiled from the test file, possibly under stdlib decorators."""
        func = getattr(value, "__func__", value)
        for _ in range(20):
            if not isinstance(func, types.FunctionType):
                return False
            code = func.__code__
            ours = self.compiled.get(module, {}).get(code.co_qualname, ())
            if func.__module__ == module and any(code == c for c in ours):
                return True
            inner = func.__dict__.get("__wrapped__")
            if inner is None or not str(func.__module__).startswith(TRUSTED_WRAPPERS):
                return False
            func = getattr(inner, "__func__", inner)
        return False


class Suite:
    """The imported test modules, and one answer per test the driver asks for."""

    def __init__(self, config: dict[str, Any], integrity: Integrity, pytest_module: Any) -> None:
        self.config = config
        self.pytest = pytest_module
        self.pid = os.getpid()
        self.modules: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        for file_name in config["files"]:
            name = file_name[:-3]
            try:
                self.modules[name] = __import__(name)
            except BaseException:
                self.errors[name] = _reason_of(traceback.format_exc())
        self.integrity = integrity
        integrity.modules = self.modules
        self.baseline = self.integrity.problems()
        self.set_ups: dict[str, str | None] = {}  # module or class -> None (done) or why its set-up failed
        self.run_test: Callable[[str], tuple[str, str]] = self._run_unittest

    def imported(self) -> list[Any]:
        """``[errors by module, tamper]``: the first thing the driver asks."""
        return [self.errors, self.baseline]

    def test(self, test_id: str) -> list[Any]:
        """``[status, reason, tamper]`` for one test, by its id (``module.Class.method`` or ``module.function``)."""
        mod_name = str(test_id).partition(".")[0]
        tamper = self.integrity.problems()
        if mod_name in self.errors:
            status, reason = "error", f"import of {mod_name} failed: {self.errors[mod_name]}"
        elif mod_name not in self.modules:
            status, reason = "error", f"test module {mod_name} missing"
        else:
            status, reason = self.run_test(str(test_id))
        if os.getpid() != self.pid:
            os._exit(0)  # a fork made by a test: only this process answers
        tamper += [p for p in self.integrity.problems() if p not in tamper]
        return [status, reason, tamper]

    def serve(self, loop: Callable[[], None]) -> None:
        """Run the answerer's serving ``loop``: inside pytest's test loop when the tests need pytest."""
        if self.pytest is None:
            loop()
            return
        run_under_pytest(self, loop)

    def _run_unittest(self, test_id: str) -> tuple[str, str]:
        mod_name, _, rest = test_id.partition(".")
        cls_name, _, meth_name = rest.rpartition(".")
        module = self.modules[mod_name]
        if not cls_name:
            func = getattr(module, meth_name, None)
            return _run_plain(func) if callable(func) else ("error", f"{meth_name} not found")
        cls = getattr(module, cls_name, None)
        if not isinstance(cls, type):
            return "error", f"{cls_name} is not a class"
        if not issubclass(cls, unittest.TestCase):
            return _run_plain(lambda: _plain_method(cls, meth_name))
        if not callable(getattr(cls, meth_name, None)):
            return "error", f"{cls_name}.{meth_name} not found"
        failed = self._set_up(module, cls)
        return ("error", failed) if failed else _run_case(cls(meth_name))

    def _set_up(self, module: Any, cls: type) -> str | None:
        """Module and class set-up, once per process; why it failed (every test that needs it then fails)."""
        for key, set_up in ((module.__name__, getattr(module, "setUpModule", None)),
                            (module.__name__ + "." + cls.__name__, getattr(cls, "setUpClass", None))):
            if key not in self.set_ups:
                self.set_ups[key] = None
                try:
                    if callable(set_up):
                        set_up()
                except BaseException:
                    self.set_ups[key] = "set-up failed: " + _exc_line(sys.exc_info())
            if self.set_ups[key] is not None:
                return self.set_ups[key]
        return None


def _run_plain(call: Callable[[], Any]) -> tuple[str, str]:
    """A pytest-style test: passing means returning without an exception."""
    try:
        call()
    except AssertionError:
        return "failed", _exc_line(sys.exc_info())
    except unittest.SkipTest as exc:
        return "failed", "skipped: " + str(exc)[:400]
    except BaseException:
        return "error", _exc_line(sys.exc_info())
    return "passed", ""


def _plain_method(cls: type, name: str) -> None:
    """A test method of a plain class (pytest style), with its ``setup_method``/``teardown_method``."""
    instance = cls()
    method = getattr(instance, name)
    set_up = getattr(instance, "setup_method", None)
    if callable(set_up):
        set_up(method)
    try:
        method()
    finally:
        tear_down = getattr(instance, "teardown_method", None)
        if callable(tear_down):
            tear_down(method)


def _run_case(case: unittest.TestCase) -> tuple[str, str]:
    result = Recorder()
    try:
        unittest.TestCase.run(case, result)
    except BaseException:
        return "error", _reason_of(traceback.format_exc())
    if result.failures:
        return "failed", _exc_line(result.first) if result.first else _reason_of(result.failures[0][1])
    if result.errors:
        return "error", _exc_line(result.first) if result.first else _reason_of(result.errors[0][1])
    if result.skipped:
        return "failed", "skipped: " + str(result.skipped[0][1])[:400]
    if result.unexpectedSuccesses:
        return "failed", "unexpected success"
    if result.testsRun != 1:
        return "error", "the test did not run"
    return "passed", ""


def run_under_pytest(suite: Suite, loop: Callable[[], None]) -> None:
    """Collect with pytest, then serve the answerer's ``loop`` from pytest's own test loop (see the module doc)."""
    pytest = suite.pytest
    failing = (AssertionError, pytest.fail.Exception)

    class Verdicts:
        """A pytest plugin: the answerer's loop in place of pytest's, and one verdict per test id."""

        def __init__(self) -> None:
            self.reports: list[Any] = []
            self.crash: Any = None  # (when, exc_info triple) of the first exception of the current item

        @pytest.hookimpl(tryfirst=True)  # type: ignore[untyped-decorator]  # pytest is Any here (not the host's)
        def pytest_runtestloop(self, session: Any) -> bool:
            groups: dict[str, list[Any]] = {}
            for item in session.items:
                groups.setdefault(_test_id(item), []).append(item)
            suite.run_test = lambda test_id: self.run_items(groups.get(test_id, []))
            loop()
            return True

        def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
            if call.excinfo is not None and self.crash is None:
                self.crash = (call.when, (call.excinfo.type, call.excinfo.value, None))

        def pytest_runtest_logreport(self, report: Any) -> None:
            self.reports.append(report)

        def run_items(self, items: list[Any]) -> tuple[str, str]:
            if not items:
                return "error", "pytest did not collect this test"
            for n, item in enumerate(items):
                self.reports, self.crash = [], None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=items[n + 1] if n + 1 < len(items) else None)
                status, reason = _item_verdict(self.reports, self.crash, failing)
                if status != "passed":
                    params = item.name[item.name.index("["):] + " " if "[" in item.name else ""
                    return status, (params + reason)[:500]
            return "passed", ""

    config = suite.config
    files = [os.path.join(config["tests_dir"], f) for f in config["files"] if f[:-3] in suite.modules]
    if not files:  # without any, pytest would collect the working folder; every test then fails at import
        suite.run_test = lambda _id: ("error", "pytest collected no test module")
        loop()
        return
    args = [*files, "-s", "--assert=plain", "-p", "no:cacheprovider", "-p", "no:terminal",
            "--rootdir", config["tests_dir"]]
    status = pytest.main(args, plugins=[Verdicts()])  # returns before its loop only if it stopped early
    if suite.run_test == suite._run_unittest:
        suite.run_test = lambda _id: ("error", f"pytest stopped before running the tests (exit status {int(status)})")
        loop()


def _test_id(item: Any) -> str:
    """A pytest item's ``module.Class.method`` / ``module.function``, as the host discovered it (parameters
    dropped)."""
    parts = item.nodeid.split("::")
    parts[-1] = getattr(item, "originalname", None) or parts[-1]
    return ".".join([os.path.basename(str(item.path))[:-3], *parts[1:]])


def _item_verdict(reports: list[Any], crash: Any, failing: tuple[type[BaseException], ...]) -> tuple[str, str]:
    """One pytest item's reports (and its first exception, ``(when, exc_info)``) -> (status, reason), as the
    unittest path decides them."""
    for report in reports:
        if report.failed:
            if crash is None:
                return "failed", "unexpected success" if hasattr(report, "wasxfail") else report.when
            when, err = crash
            if when != "call":
                return "error", f"{when} failed: {_exc_line(err)}"
            return ("failed" if issubclass(err[0], failing) else "error"), _exc_line(err)
    for report in reports:
        if report.skipped and not hasattr(report, "wasxfail"):
            detail = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            return "failed", "skipped: " + str(detail).removeprefix("Skipped: ")[:400]
    if not reports:
        return "error", "the test did not run"
    return "passed", ""
