"""The test runner: one process per suite (restarted after a crash or a timeout).

Runs INSIDE the sandbox, stdlib only. Started by ``server.py`` as
``python3 -I -S -c <this source> <config json>``. It is the only process
where untrusted code (the submission, imported by the tests) runs next to
judge code, so it trusts nothing learned after the first untrusted import:

* the list of tests comes from the server (read from the source, not from
  the loaded modules);
* a test runs only when the server asks, with a fresh nonce the runner could
  not know before; a verdict without the right nonce is reported by the server
  as forged;
* before and after every test the runner compares unittest's classes, the
  test classes and the test modules' functions with what it compiled itself
  from the judge's files before importing anything; any difference marks the
  run as tampered and the test as failed.

pytest: when a test file names pytest anywhere (at top level or inside a
test) or has a test that takes arguments (fixtures such as ``tmp_path``),
and the box has pytest (the image's site-packages, put on the path before
the submission's folder), the runner imports pytest before the first
untrusted import and lets pytest collect and
run the tests (fixtures, ``parametrize``, ``raises``, marks) through a plugin
that replaces pytest's test loop with the same ``run <index> <nonce>`` loop:
a test id's items (one per parameter set) run when the server asks, and their
reports make one verdict. The integrity checks run around each test as above.

Protocol (server -> runner on the control fd, one line each):
``run <index> <nonce>``. Runner -> server on the result fd, JSON lines:
``{"k": "imported", "errors": {module: reason}}`` once, then per test
``{"k": "verdict", "i": index, "nonce": nonce, "status": ..., "reason": ..., "tamper": [...]}``.
"""

from __future__ import annotations

from typing import Any


def _main() -> None:
    import builtins
    import importlib
    import json
    import os
    import sys
    import traceback
    import types
    import unittest
    import unittest.case

    config = json.loads(sys.argv[1])
    # Early binding is a security measure here: everything below is bound before the first untrusted
    # import, so a submission that later patches os, json, traceback, unittest or sys cannot change what
    # the checks compare against or how records reach the server. (It cannot stop a submission that
    # rewrites this frame's locals; that is why hidden tests are judged outside, see driver.py.)
    ctl_fd = config["ctl"]
    res_fd = config["res"]
    write = os.write
    read = os.read
    exit_now = os._exit
    orig_case = unittest.TestCase
    orig_run = unittest.TestCase.run
    orig_result = unittest.TestResult
    format_exc = traceback.format_exc
    exc_info = sys.exc_info
    assertion_error = AssertionError
    skip_exc = unittest.SkipTest
    base_exc = BaseException
    dumps = json.dumps
    getpid = os.getpid
    runner_pid = getpid()
    gettrace = sys.gettrace
    getprofile = sys.getprofile

    def snapshot_class(cls: type) -> dict[str, Any]:
        return {k: v for k, v in vars(cls).items()}

    guarded = [orig_case, orig_result, unittest.case._Outcome]  # type: ignore[attr-defined]
    guarded_dicts = {cls: snapshot_class(cls) for cls in guarded}
    guarded_modules = {m: dict(vars(m)) for m in (unittest, unittest.case, unittest.result, builtins)}
    baseline_names: dict[str, dict[str, Any]] = {}  # judge namespace label -> its contents right after import

    def needs_pytest(code: types.CodeType) -> bool:
        """The code names pytest (at top level or inside a test), or is a test that asks for fixtures."""
        if "pytest" in code.co_names:
            return True
        name = code.co_qualname.rsplit(".", 1)[-1]
        return name.startswith("test") and code.co_argcount > (1 if "." in code.co_qualname else 0)

    # Compile the judge's test files before any untrusted import.
    tests_dir = config["tests_dir"]
    compiled: dict[str, dict[str, list[types.CodeType]]] = {}  # qualname-path -> code, per module
    imports_pytest = False
    for file_name in config["files"]:
        path = os.path.join(tests_dir, file_name)
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        codes: dict[str, list[types.CodeType]] = {}
        try:
            top = compile(source, path, "exec", dont_inherit=True)
        except SyntaxError:
            top = None
        stack = [top] if top is not None else []
        while stack:
            code = stack.pop()
            imports_pytest = imports_pytest or needs_pytest(code)
            for const in code.co_consts:
                if isinstance(const, types.CodeType):
                    codes.setdefault(const.co_qualname, []).append(const)
                    stack.append(const)
        compiled[file_name[:-3]] = codes

    # Judge tests first; the submission's folder last, so nothing it writes shadows a module the judge imports.
    sys.path.insert(0, tests_dir)
    pytest_mod: Any = None
    if imports_pytest:  # pytest is judge code here: imported from the image before anything untrusted
        import site

        sys.path.extend(d for d in site.getsitepackages() if os.path.isdir(d) and d not in sys.path)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        try:
            pytest_mod = importlib.import_module("pytest")
        except ImportError:
            pytest_mod = None  # the test modules' own import then fails and says so
    sys.path.append(config["sol_dir"])
    sys.dont_write_bytecode = True

    def reason_of(text: object) -> str:
        lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
        return (lines[-1] if lines else "error")[:500]

    def exc_line(err: Any) -> str:
        """``Type: first line of the message`` for an exc_info triple."""
        try:
            message = str(err[1]).strip().splitlines()
            name = getattr(err[0], "__name__", "Exception")
            return (f"{name}: {message[0]}" if message else name)[:500]
        except base_exc:
            return "an exception whose message cannot be shown"

    class Recorder(unittest.TestResult):  # the class bound above as orig_result
        """Keeps the first failure's exception, for a one-line reason."""

        def __init__(self) -> None:
            super().__init__()
            self.first = None

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

    guarded_dicts[Recorder] = snapshot_class(Recorder)

    def emit(record: dict[str, Any]) -> None:
        if getpid() != runner_pid:  # a fork made by the code under test: only the runner reports
            exit_now(0)
        data = (dumps(record) + "\n").encode()
        while data:
            data = data[write(res_fd, data):]

    modules = {}
    import_errors = {}
    for file_name in config["files"]:
        name = file_name[:-3]
        try:
            modules[name] = __import__(name)
        except base_exc:
            import_errors[name] = reason_of(format_exc())

    def code_ok(module_name: str, func: Any) -> bool:
        code = getattr(func, "__code__", None)
        if code is None:
            return True
        return any(code == c for c in compiled.get(module_name, {}).get(code.co_qualname, ()))

    verdict_names = {
        "setUp", "tearDown", "setUpClass", "tearDownClass", "setUpModule", "tearDownModule", "load_tests",
        "run", "debug", "__call__", "__init__", "__getattribute__", "__getattr__", "__init_subclass__", "id",
        "_callSetUp", "_callTestMethod", "_callTearDown", "_callCleanup", "doCleanups", "doClassCleanups",
        "defaultTestResult", "_addSkip", "_feedErrorsToResult", "subTest", "fail", "failureException",
    }
    trusted_wrapper_modules = ("unittest", "functools", "contextlib")
    missing = object()

    def judge_callable(mod_name: str, value: Any) -> bool:
        """True when ``value`` is the judge's function, possibly under stdlib decorators (mock.patch...)."""
        func = getattr(value, "__func__", value)
        for _ in range(20):
            if not isinstance(func, types.FunctionType):
                return False
            if code_ok(mod_name, func) and func.__module__ == mod_name:
                return True
            inner = func.__dict__.get("__wrapped__")
            if inner is None or not str(func.__module__).startswith(trusted_wrapper_modules):
                return False
            func = getattr(inner, "__func__", inner)
        return False

    def namespace_problems(mod_name: str, label: str, namespace: Any) -> list[str]:
        """Verdict-relevant names and the judge's functions must stay the judge's code."""
        problems = []
        before = baseline_names.setdefault(label, dict(namespace))
        for attr in set(before) | set(namespace):
            old = before.get(attr, missing)
            new = namespace.get(attr, missing)
            was_judge = old is not missing and judge_callable(mod_name, old)
            if not (attr.startswith("test") or attr in verdict_names or was_judge):
                continue
            if new is missing:
                problems.append(f"{label}.{attr} was deleted")
            elif callable(new) or hasattr(new, "__func__"):
                if not judge_callable(mod_name, new) and (new is not old or attr.startswith("test")):
                    problems.append(f"{label}.{attr} is not the judge's code")
            elif new is not old:
                problems.append(f"{label}.{attr} was replaced")
        return problems

    def check_integrity() -> list[str]:
        problems = []
        for cls, before in guarded_dicts.items():
            now = vars(cls)
            for key in set(before) | set(now):
                if before.get(key, None) is not now.get(key, None):
                    problems.append(f"{cls.__name__}.{key} was replaced")
        for mod, before in guarded_modules.items():
            now = vars(mod)
            for key, value in before.items():
                if now.get(key, None) is not value:
                    problems.append(f"{mod.__name__}.{key} was replaced")
        if gettrace() is not None:
            problems.append("a trace hook was installed (sys.settrace)")
        if getprofile() is not None:
            problems.append("a profile hook was installed (sys.setprofile)")
        if sys.modules.get("unittest") is not unittest:
            problems.append("sys.modules['unittest'] was replaced")
        for mod_name, mod in modules.items():
            if sys.modules.get(mod_name) is not mod:
                problems.append(f"test module {mod_name} was replaced")
            problems.extend(namespace_problems(mod_name, mod_name, vars(mod)))
            for key, value in list(vars(mod).items()):
                if isinstance(value, type) and value.__module__ == mod_name:
                    problems.extend(namespace_problems(mod_name, f"{mod_name}.{key}", vars(value)))
        return problems

    baseline = check_integrity()
    emit({"k": "imported", "errors": import_errors, "tamper": baseline})

    def run_plain(call: Any) -> tuple[str, str]:
        """A pytest-style test: passing means returning without an exception."""
        try:
            call()
        except assertion_error:
            return "failed", exc_line(exc_info())
        except skip_exc as exc:
            return "failed", "skipped: " + str(exc)[:400]
        except base_exc:
            return "error", exc_line(exc_info())
        return "passed", ""

    def run_one(module: Any, cls_name: str, meth_name: str, done: dict[str, str | None]) -> tuple[str, str]:
        if not cls_name:
            func = getattr(module, meth_name, None)
            if not callable(func):
                return "error", f"{meth_name} not found"
            return run_plain(func)
        cls = getattr(module, cls_name, None)
        if isinstance(cls, type) and not issubclass(cls, orig_case):
            def plain_method() -> None:
                instance = cls()
                set_up = getattr(instance, "setup_method", None)
                if callable(set_up):
                    set_up(getattr(instance, meth_name))
                try:
                    getattr(instance, meth_name)()
                finally:
                    tear_down = getattr(instance, "teardown_method", None)
                    if callable(tear_down):
                        tear_down(getattr(instance, meth_name))

            return run_plain(plain_method)
        if not isinstance(cls, type):
            return "error", f"{cls_name} is not a class"
        if not callable(getattr(cls, meth_name, None)):
            return "error", f"{cls_name}.{meth_name} not found"
        # Module and class set-up run once per runner; a failure fails every test that needed it.
        for key, set_up in ((module.__name__, getattr(module, "setUpModule", None)),
                            (module.__name__ + "." + cls_name, getattr(cls, "setUpClass", None))):
            if key not in done:
                done[key] = None
                try:
                    if callable(set_up):
                        set_up()
                except base_exc:
                    done[key] = "set-up failed: " + exc_line(exc_info())
            failure = done[key]
            if failure is not None:
                return "error", failure
        result = Recorder()
        try:
            orig_run(cls(meth_name), result)
        except base_exc:
            return "error", reason_of(format_exc())
        if result.failures:
            return "failed", exc_line(result.first) if result.first else reason_of(result.failures[0][1])
        if result.errors:
            return "error", exc_line(result.first) if result.first else reason_of(result.errors[0][1])
        if result.skipped:
            return "failed", "skipped: " + str(result.skipped[0][1])[:400]
        if result.unexpectedSuccesses:
            return "failed", "unexpected success"
        if result.testsRun != 1:
            return "error", "the test did not run"
        return "passed", ""

    def serve(run_test: Any) -> None:
        """Answer ``run <index> <nonce>`` lines until the server closes the control fd; never returns."""
        pending = b""
        while True:
            while b"\n" not in pending:
                chunk = read(ctl_fd, 4096)
                if not chunk:
                    exit_now(0)
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            parts = line.decode().split()
            if len(parts) != 3 or parts[0] != "run":
                exit_now(3)
            index, nonce = int(parts[1]), parts[2]
            test_id = config["names"][index]
            mod_name, _, rest = test_id.partition(".")
            cls_name, _, meth_name = rest.rpartition(".")
            tamper = check_integrity()
            status, reason = "error", ""
            if mod_name in import_errors:
                reason = f"import of {mod_name} failed: {import_errors[mod_name]}"
            elif mod_name not in modules:
                reason = f"test module {mod_name} missing"
            else:
                status, reason = run_test(test_id, mod_name, cls_name, meth_name)
                if getpid() != runner_pid:
                    exit_now(0)
            tamper += [p for p in check_integrity() if p not in tamper]
            emit({"k": "verdict", "i": index, "nonce": nonce, "status": status, "reason": reason, "tamper": tamper})

    if pytest_mod is not None:
        run_under_pytest(pytest_mod, config, modules, serve, exc_line)
        exit_now(0)
    set_ups: dict[str, str | None] = {}  # module or class -> None (done) or why its set-up failed
    serve(lambda _id, mod_name, cls_name, meth_name: run_one(modules[mod_name], cls_name, meth_name, set_ups))


def run_under_pytest(pytest: Any, config: dict[str, Any], modules: dict[str, Any], serve: Any, exc_line: Any) -> None:
    """Collect with pytest, then serve the runner's loop from pytest's own test loop (see the module doc)."""
    import os

    failing = (AssertionError, pytest.fail.Exception)

    class Verdicts:
        """A pytest plugin: the runner's loop in place of pytest's, and one verdict per test id."""

        def __init__(self) -> None:
            self.reports: list[Any] = []
            self.crash: Any = None  # (when, exc_info triple) of the first exception of the current item

        @pytest.hookimpl(tryfirst=True)  # type: ignore[untyped-decorator]  # pytest is Any here (not the host's)
        def pytest_runtestloop(self, session: Any) -> bool:
            groups: dict[str, list[Any]] = {}
            for item in session.items:
                groups.setdefault(self.test_id(item), []).append(item)
            serve(lambda test_id, *_: self.run_items(groups.get(test_id, [])))
            return True

        @staticmethod
        def test_id(item: Any) -> str:
            """``module.Class.method`` / ``module.function``, as the host discovered it (parameters dropped)."""
            parts = item.nodeid.split("::")
            parts[-1] = getattr(item, "originalname", None) or parts[-1]
            return ".".join([os.path.basename(str(item.path))[:-3], *parts[1:]])

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
                status, reason = self.verdict()
                if status != "passed":
                    params = item.name[item.name.index("["):] + " " if "[" in item.name else ""
                    return status, (params + reason)[:500]
            return "passed", ""

        def verdict(self) -> tuple[str, str]:
            """One item's reports -> (status, reason), as the unittest path decides them."""
            for report in self.reports:
                if report.failed:
                    if self.crash is None:
                        return "failed", "unexpected success" if hasattr(report, "wasxfail") else report.when
                    when, err = self.crash
                    if when != "call":
                        return "error", f"{when} failed: {exc_line(err)}"
                    return ("failed" if issubclass(err[0], failing) else "error"), exc_line(err)
            for report in self.reports:
                if report.skipped and not hasattr(report, "wasxfail"):
                    detail = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
                    return "failed", "skipped: " + str(detail).removeprefix("Skipped: ")[:400]
            if not self.reports:
                return "error", "the test did not run"
            return "passed", ""

    files = [os.path.join(config["tests_dir"], f) for f in config["files"] if f[:-3] in modules]
    if files:  # without any, pytest would collect the working folder; every test then fails at import
        args = [*files, "-s", "--assert=plain", "-p", "no:cacheprovider", "-p", "no:terminal",
                "--rootdir", config["tests_dir"]]
        status = pytest.main(args, plugins=[Verdicts()])  # returns only if it stopped before its test loop
        serve(lambda *_: ("error", f"pytest stopped before running the tests (exit status {int(status)})"))
    serve(lambda *_: ("error", "pytest collected no test module"))


if __name__ == "__main__":
    _main()
