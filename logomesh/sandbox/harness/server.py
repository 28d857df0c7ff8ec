"""The harness server: one per sandbox, serving many runs. Stdlib only.

Runs INSIDE the sandbox as ``python3 -I -S -c <this source> <config json>``
(the config carries the limits and the runner's source). It reads one JSON
request per line on stdin and answers on stdout with JSON lines:
``{"ev": "ready"}`` once, ``{"ev": "out", ...}`` while a run prints, and
``{"ev": "done", "id": ..., "result": {...}}`` at the end of each run.

Untrusted code only ever runs in children (fork + exec of python3) whose
stdin is /dev/null and whose stdout/stderr are pipes read here, capped. The
server makes itself non-dumpable so those children (same uid) can neither
ptrace it nor open its /proc fds to write to the host channel; it is PID 1 in
Docker, which its children cannot kill. After each run every other process
in the sandbox is killed and the run's directory is removed.
"""
import contextlib


def _main():
    import json
    import os
    import resource
    import selectors
    import shutil
    import signal
    import sys
    import time

    config = json.loads(sys.argv[1])
    limits = config["limits"]
    runner_source = config["runner"]
    work_root = config["work"]
    python = sys.executable or "/usr/bin/python3"
    out_cap = int(limits["output_bytes"])
    stdin_fd = sys.stdin.fileno()
    stdout_fd = sys.stdout.fileno()

    def prctl(option, value):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
        except Exception:
            pass

    prctl(4, 0)  # PR_SET_DUMPABLE 0
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans come back to us to be reaped and swept

    def send(record):
        data = (json.dumps(record) + "\n").encode()
        while data:
            data = data[os.write(stdout_fd, data):]

    def child_limits():
        """Runs in the child between fork and exec."""
        os.setsid()
        try:
            with open("/proc/self/oom_score_adj", "w") as handle:
                handle.write("1000")
        except OSError:
            pass
        pairs = [
            (resource.RLIMIT_FSIZE, int(limits["file_bytes"])),
            (resource.RLIMIT_NOFILE, int(limits["open_files"])),
            (resource.RLIMIT_AS, int(limits["address_space_bytes"])),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_CPU, int(limits["cpu_seconds"])),
        ]
        with contextlib.suppress(OSError):
            os.nice(int(limits["nice"]))
        nproc = limits.get("nproc")
        if nproc:
            pairs.append((resource.RLIMIT_NPROC, int(nproc)))
        for which, value in pairs:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (value, value))

    def spawn(argv, cwd, pass_fds=()):
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.dup2(devnull, 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                low = 3
                for fd in sorted(pass_fds):
                    os.closerange(low, fd)
                    low = fd + 1
                os.closerange(low, 65536)
                for fd in pass_fds:
                    os.set_inheritable(fd, True)
                os.chdir(cwd)
                child_limits()
                env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2",
                       "TMPDIR": cwd, "PYTHONDONTWRITEBYTECODE": "1"}
                os.execve(python, argv, env)
            finally:
                os._exit(127)
        for fd in (out_w, err_w, devnull):
            os.close(fd)
        return pid, out_r, err_r

    class Output:
        """Capped capture of one run's stdout/stderr.

        The first half of the cap is kept and forwarded to the host line by line
        as it arrives; past it only a rolling tail is kept (so a final result
        line survives a flood), and everything between is dropped and counted.
        """

        marker_room = 100

        def __init__(self, run_id):
            self.run_id = run_id
            self.head_cap = out_cap // 2
            self.tail_cap = out_cap - self.head_cap - self.marker_room
            self.kept = {"stdout": [], "stderr": []}
            self.size = {"stdout": 0, "stderr": 0}
            self.pending = {"stdout": b"", "stderr": b""}
            self.tail = {"stdout": b"", "stderr": b""}
            self.dropped = {"stdout": 0, "stderr": 0}
            self.truncated = False
            self.origin = "suite"

        def set_origin(self, origin):
            self.flush()
            self.origin = origin

        def feed(self, stream, data):
            room = self.head_cap - self.size[stream]
            if room > 0:
                head, data = data[:room], data[room:]
                self.size[stream] += len(head)
                self.feed_head(stream, head)
            if data:
                self.truncated = True
                tail = self.tail[stream] + data
                if len(tail) > self.tail_cap:
                    self.dropped[stream] += len(tail) - self.tail_cap
                    tail = tail[-self.tail_cap:]
                self.tail[stream] = tail

        def feed_head(self, stream, data):
            pending = self.pending[stream] + data
            if len(pending) > 8192 or self.size[stream] >= self.head_cap:
                self.pending[stream] = b""
                self.forward(stream, pending)
            elif b"\n" in pending:
                head, _, rest = pending.rpartition(b"\n")
                self.pending[stream] = rest
                self.forward(stream, head + b"\n")
            else:
                self.pending[stream] = pending

        def forward(self, stream, data):
            text = data.decode("utf-8", errors="replace")
            self.kept[stream].append(text)
            send({"ev": "out", "id": self.run_id, "origin": self.origin, "stream": stream, "text": text})

        def flush(self):
            for stream, pending in self.pending.items():
                if pending:
                    self.pending[stream] = b""
                    self.forward(stream, pending)

        def text(self, stream):
            self.flush()
            text = "".join(self.kept[stream])
            if self.dropped[stream]:
                text += f"\n[... {self.dropped[stream]} bytes dropped by the output cap ...]\n"
            return text + self.tail[stream].decode("utf-8", errors="replace")

    def pump(sel, output, deadline, until_fd=None, exited=None):
        """Read pipes until ``until_fd`` has a complete line (returned), all pipes close, or the deadline.

        Returns (kind, data): ("line", bytes) | ("eof", None) | ("timeout", None).
        """
        while True:
            if until_fd is not None and buffers.get(until_fd, b"").find(b"\n") >= 0:
                line, rest = buffers[until_fd].split(b"\n", 1)
                buffers[until_fd] = rest
                return "line", line
            if not sel.get_map():
                return "eof", None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", None
            if exited is not None and exited():
                return "exited", None
            for key, _ in sel.select(min(remaining, 1.0 if exited is None else 0.05)):
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fd)
                    if key.data == "res" and until_fd == key.fd:
                        return "eof", None
                    continue
                if key.data == "res":
                    buffers[key.fd] = buffers.get(key.fd, b"") + data
                    if len(buffers[key.fd]) > 1 << 20:
                        return "flood", None
                else:
                    output.feed(key.data, data)

    buffers = {}

    def kill_group(pid):
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)

    def reap(pid):
        """Wait for ``pid``; return (exit_code, signal)."""
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None, None
        if os.WIFSIGNALED(status):
            return None, os.WTERMSIG(status)
        return os.WEXITSTATUS(status), None

    def protected():
        keep = {1}
        pid = os.getpid()
        while pid > 1:
            keep.add(pid)
            try:
                with open(f"/proc/{pid}/stat") as handle:
                    pid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
        return keep

    keep_alive = protected()

    def sweep():
        """Kill every process in the sandbox but us and our ancestors; reap what we can."""
        for _ in range(200):
            alive = 0
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) in keep_alive:
                    continue
                try:
                    with open(f"/proc/{entry}/stat") as handle:
                        state = handle.read().rsplit(")", 1)[1].split()[0]
                except (OSError, IndexError):
                    continue
                if state in ("Z", "X"):
                    continue
                alive += 1
                with contextlib.suppress(OSError):
                    os.kill(int(entry), signal.SIGKILL)
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
            if not alive:
                return
            time.sleep(0.005)

    def safe_name(name):
        return isinstance(name, str) and name and "/" not in name and "\0" not in name and name not in (".", "..")

    def write_files(folder, files):
        os.makedirs(folder, exist_ok=True)
        for name, text in files.items():
            if not safe_name(name):
                raise ValueError(f"bad file name {name!r}")
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)

    def describe_end(code, sig):
        if sig is not None:
            names = {9: "SIGKILL (memory or process limit?)", 11: "SIGSEGV", 6: "SIGABRT", 25: "SIGXFSZ (file too big)",
                     24: "SIGXCPU"}
            return f"killed by signal {sig} {names.get(sig, '')}".strip()
        return f"exited with status {code}"

    # ---- suite ----------------------------------------------------------------------------------

    def run_suite(request, folder):
        run_id = request["id"]
        names = request["names"]
        files = sorted(request["tests"])
        tests_dir = os.path.join(folder, "tests")
        sol_dir = os.path.join(folder, "sol")
        write_files(tests_dir, request["tests"])
        write_files(sol_dir, {"solution.py": request["solution"]})
        for name in files:
            os.chmod(os.path.join(tests_dir, name), 0o444)
        os.chmod(tests_dir, 0o555)
        output = Output(run_id)
        started = time.monotonic()
        suite_deadline = started + float(request["timeout"])
        test_timeout = float(request["test_timeout"])
        outcomes = [None] * len(names)
        tamper = []
        error = None

        def note_tamper(reasons):
            for reason in reasons:
                if reason not in tamper:
                    tamper.append(reason)

        next_index = 0
        restarts = 0
        while next_index < len(names):
            if time.monotonic() >= suite_deadline:
                break
            ctl_r, ctl_w = os.pipe()
            res_r, res_w = os.pipe()
            child_config = {"ctl": ctl_r, "res": res_w, "tests_dir": tests_dir, "sol_dir": sol_dir,
                            "files": files, "names": names}
            output.set_origin("import")
            pid, out_r, err_r = spawn(
                [python, "-I", "-S", "-u", "-c", runner_source, json.dumps(child_config)], sol_dir, (ctl_r, res_w)
            )
            os.close(ctl_r)
            os.close(res_w)
            sel = selectors.DefaultSelector()
            sel.register(out_r, selectors.EVENT_READ, "stdout")
            sel.register(err_r, selectors.EVENT_READ, "stderr")
            sel.register(res_r, selectors.EVENT_READ, "res")
            buffers[res_r] = b""
            kind, line = pump(sel, output, min(suite_deadline, time.monotonic() + test_timeout + 5.0), res_r)
            record = _parse(line) if kind == "line" else None
            if record is None or record.get("k") != "imported":
                kill_group(pid)
                code, sig = reap(pid)
                drain(sel, output)
                if kind == "timeout":
                    reason = "timeout while importing the tests"
                    status = "timeout"
                elif kind == "line":
                    reason = "the runner's channel carried a forged record"
                    status = "error"
                    note_tamper(["forged record on the result channel"])
                else:
                    reason = "the runner died while importing the tests: " + describe_end(code, sig)
                    status = "crashed"
                error = error or reason
                for i in range(next_index, len(names)):
                    outcomes[i] = (status, reason, 0.0)
                next_index = len(names)
                close_all(sel, ctl_w, res_r, out_r, err_r)
                break
            note_tamper(record.get("tamper") or [])
            import_errors = record.get("errors") or {}
            if import_errors and isinstance(import_errors, dict) and error is None:
                error = ("import failed: " + "; ".join(f"{m}: {r}" for m, r in sorted(import_errors.items())))[:500]
            died = False
            while next_index < len(names):
                index = next_index
                output.set_origin(names[index])
                nonce = os.urandom(16).hex()
                t0 = time.monotonic()
                deadline = min(suite_deadline, t0 + test_timeout)
                try:
                    os.write(ctl_w, f"run {index} {nonce}\n".encode())
                except OSError:
                    # The runner is gone; still read what it left on the channel (a forgery is reported).
                    deadline = min(deadline, time.monotonic() + 1.0)
                kind, line = pump(sel, output, deadline, res_r)
                elapsed = time.monotonic() - t0
                drain_ready(sel, output)  # output written before the verdict belongs to this test
                if kind == "line":
                    record = _parse(line)
                    if (
                        record is None
                        or record.get("k") != "verdict"
                        or record.get("nonce") != nonce
                        or record.get("i") != index
                    ):
                        note_tamper([f"forged or out-of-order result record during {names[index]}"])
                        outcomes[index] = ("error", "forged result record on the judge's channel", elapsed)
                        next_index += 1
                        died = True
                        break
                    reasons = [str(r) for r in record.get("tamper") or []]
                    note_tamper(reasons)
                    status = record.get("status")
                    reason = str(record.get("reason", ""))[:500]
                    if status not in ("passed", "failed", "error"):
                        status, reason = "error", "bad verdict"
                    if reasons:
                        status, reason = "failed", "tampered: " + reasons[0]
                    outcomes[index] = (status, reason, elapsed)
                    next_index += 1
                    continue
                # timeout, eof, flood: the runner is gone or must go.
                kill_group(pid)
                code, sig = reap(pid)
                if kind == "timeout":
                    if time.monotonic() >= suite_deadline:
                        outcomes[index] = ("timeout", f"suite wall clock of {request['timeout']} s exceeded", elapsed)
                    else:
                        outcomes[index] = ("timeout", f"test exceeded {test_timeout:g} s", elapsed)
                elif kind == "flood":
                    note_tamper(["flooded the result channel"])
                    outcomes[index] = ("error", "flooded the judge's channel", elapsed)
                else:
                    outcomes[index] = ("crashed", "the test process " + describe_end(code, sig), elapsed)
                next_index += 1
                died = True
                break
            if not died:
                with contextlib.suppress(OSError):
                    os.close(ctl_w)  # EOF on its control pipe: the runner exits
                ctl_w = -1
                kill_group(pid)
                reap(pid)
            drain(sel, output)
            close_all(sel, ctl_w, res_r, out_r, err_r)
            sweep()
            restarts += 1
        if next_index < len(names) or time.monotonic() >= suite_deadline:
            for i in range(len(names)):
                if outcomes[i] is None:
                    outcomes[i] = ("timeout", f"suite wall clock of {request['timeout']} s exceeded", 0.0)
                    error = error or f"suite wall clock of {request['timeout']} s exceeded"
        return {
            "outcomes": [
                {"name": names[i], "status": o[0], "reason": o[1], "duration_s": round(o[2], 6)}
                for i, o in enumerate(outcomes)
            ],
            "tampered": bool(tamper),
            "tamper": tamper,
            "error": error,
            "stdout": output.text("stdout"),
            "stderr": output.text("stderr"),
            "truncated": output.truncated,
            "duration_s": round(time.monotonic() - started, 6),
            "restarts": restarts,
        }

    def drain_ready(sel, output):
        """Read whatever output is already waiting in the pipes, without blocking."""
        for _ in range(64):
            progressed = False
            for key, _ in sel.select(0):
                if key.data == "res":
                    continue
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if data:
                    output.feed(key.data, data)
                    progressed = True
            if not progressed:
                return

    def drain(sel, output):
        """Read what is left in the output pipes without waiting on live writers."""
        end = time.monotonic() + 0.2
        while sel.get_map() and time.monotonic() < end:
            events = sel.select(0.02)
            if not events:
                break
            for key, _ in events:
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fd)
                elif key.data != "res":
                    output.feed(key.data, data)

    def close_all(sel, *fds):
        """Forget the selector and close every pipe end this run opened."""
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
        sel.close()
        for fd in fds:
            buffers.pop(fd, None)
            with contextlib.suppress(OSError):
                os.close(fd)

    # ---- script ---------------------------------------------------------------------------------

    def run_script(request, folder):
        run_id = request["id"]
        files = dict(request["files"])
        files["__probe__.py"] = request["script"]
        write_files(folder, files)
        output = Output(run_id)
        output.set_origin("script")
        started = time.monotonic()
        pid, out_r, err_r = spawn([python, "-E", "-s", "-S", "-u", "__probe__.py"], folder)
        sel = selectors.DefaultSelector()
        sel.register(out_r, selectors.EVENT_READ, "stdout")
        sel.register(err_r, selectors.EVENT_READ, "stderr")
        deadline = started + float(request["timeout"])
        ended = []

        def exited():
            if not ended:
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done, status = pid, 0
                if done == pid:
                    ended.append(status)
            return bool(ended)

        kind, _ = pump(sel, output, deadline, exited=exited)
        timed_out = kind == "timeout"
        if timed_out:
            kill_group(pid)
            reap(pid)
            code = sig = None
        else:
            if not exited():
                ended.append(os.waitpid(pid, 0)[1])
            status = ended[0]
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        elapsed = time.monotonic() - started
        drain(sel, output)
        close_all(sel, out_r, err_r)
        sweep()
        return {
            "exit_code": code,
            "signal": sig,
            "stdout": output.text("stdout"),
            "stderr": output.text("stderr"),
            "timed_out": timed_out,
            "truncated": output.truncated,
            "duration_s": round(elapsed, 6),
        }

    # ---- loop -----------------------------------------------------------------------------------

    send({"ev": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(stdin_fd, 1 << 20)
            if not chunk:
                sweep()
                os._exit(0)
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        request = _parse(line)
        if request is None:
            send({"ev": "done", "id": None, "error": "bad request"})
            continue
        folder = os.path.join(work_root, f"run{request.get('id')}")
        try:
            if request.get("op") == "suite":
                result = run_suite(request, folder)
            elif request.get("op") == "script":
                result = run_script(request, folder)
            elif request.get("op") == "ping":
                result = {}
            else:
                raise ValueError(f"unknown op {request.get('op')!r}")
        except Exception as exc:
            sweep()
            send({"ev": "done", "id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"})
        else:
            send({"ev": "done", "id": request.get("id"), "result": result})
        finally:
            for root, dirs, _ in os.walk(folder):
                for d in dirs:
                    with contextlib.suppress(OSError):
                        os.chmod(os.path.join(root, d), 0o700)
            shutil.rmtree(folder, ignore_errors=True)


def _parse(line):
    import json

    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


_main()
