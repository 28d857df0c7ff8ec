"""Hidden drivers for safe_join: containment, symlinks, and ordinary names.

Every driver builds its own tree in a fresh temporary directory and records
what safe_join returned, with the tree's (random) root spelled ``<root>``, or
that it raised; the host compares the record with the reference solution's.
No expected path appears here.
"""

import contextlib
import os
import tempfile

from observe import raised, see
from solution import safe_join


class Tree:
    """root/base/{sub/file.txt, in_link -> sub, out_dir -> ../outside,
    out_file -> ../outside/secret.txt, dangling_out -> ../outside/missing,
    prefix_link -> ../base-evil, abs_out -> root/outside}   plus root/outside and root/base-evil."""

    def __init__(self, root):
        self.root = root
        self.base = os.path.join(root, "base")
        self.outside = os.path.join(root, "outside")
        self.evil = os.path.join(root, "base-evil")
        for d in (self.base, os.path.join(self.base, "sub"), self.outside, self.evil):
            os.makedirs(d, exist_ok=True)
        for f in (os.path.join(self.base, "sub", "file.txt"), os.path.join(self.outside, "secret.txt")):
            with open(f, "w") as fh:
                fh.write("x")
        links = {
            "in_link": "sub",
            "out_dir": os.path.join("..", "outside"),
            "out_file": os.path.join("..", "outside", "secret.txt"),
            "dangling_out": os.path.join("..", "outside", "missing"),
            "prefix_link": os.path.join("..", "base-evil"),
            "abs_out": self.outside,
        }
        for name, target in links.items():
            os.symlink(target, os.path.join(self.base, name))

    def inside(self, *parts):
        return os.path.join(self.base, *parts)

    def where(self, result):
        """``result`` with the temporary root spelled ``<root>``, so the record is the same on every run.

        A string elsewhere (which the reference never returns) is recorded without
        its text, which may hold the sandbox's random working directory.
        """
        if type(result) is not str:
            return result
        if result == self.root or result.startswith(self.root + os.sep):
            return "<root>" + result[len(self.root):]
        return "<outside the test root>"

    def join(self, user_path, base=None):
        """Record the joined path, or ValueError (any subclass), or the nearest builtin of anything else raised."""
        with raised(ValueError):
            see(self.where(safe_join(self.base if base is None else base, user_path)))

    def joins(self, *user_paths):
        for user_path in user_paths:
            self.join(user_path)


@contextlib.contextmanager
def tree():
    with tempfile.TemporaryDirectory() as tmp:
        yield Tree(os.path.realpath(tmp))


class TestAccepted:
    def test_plain_file(self):
        with tree() as t:
            t.joins("sub/file.txt", "sub", "new.txt")

    def test_missing_target_is_allowed(self):
        with tree() as t:
            t.joins("sub/new/upload.bin", "missing", "a/b/c/d.e")

    def test_empty_and_dot_mean_base(self):
        with tree() as t:
            t.joins("", ".", "sub/..", "./.", "sub/../.")

    def test_dotdot_that_stays_inside(self):
        with tree() as t:
            t.joins("sub/../sub/file.txt", "a/b/../../c", "a/../b", "in_link/../sub")

    def test_names_containing_dots_are_ordinary(self):
        with tree() as t:
            t.joins("..hidden", "v1..2/notes...txt", "sub/...", "a..", ".x")

    def test_result_is_normalised(self):
        with tree() as t:
            t.joins("sub//./file.txt", "./sub/", "sub/./././file.txt", "a//b///c")

    def test_inside_symlink_is_resolved(self):
        with tree() as t:
            t.joins("in_link/file.txt", "in_link", "in_link/new/x")

    def test_base_given_unnormalised_or_through_symlink(self):
        with tree() as t:
            alias = os.path.join(t.root, "alias")
            os.symlink(t.base, alias)
            t.join("sub/file.txt", base=alias)
            t.join("sub", base=t.base + os.sep)
            t.join("sub", base=os.path.join(t.base, "sub", ".."))
            t.join("", base=alias)


class TestRejected:
    # Paths that must be accepted go through the same guard, so the harness does not tell which must fail.

    def test_parent_traversal(self):
        with tree() as t:
            t.joins("..", "../outside/secret.txt", "sub/..", "sub/../../outside", "a/b/../../../x", "a/b/../../x",
                    "../../../../etc/passwd")

    def test_obfuscated_traversal(self):
        # "...." is an ordinary name; stripping "../" out of it must not create a real "..".
        with tree() as t:
            t.joins("....//....//etc/passwd", "./../outside/secret.txt", "sub/./../.././outside",
                    ".../../../outside", "..././../../outside", ".../...")

    def test_absolute_paths(self):
        with tree() as t:
            t.joins("/etc/passwd", t.outside, "sub/file.txt", t.inside("sub", "file.txt"), "/", t.base)

    def test_nul_byte(self):
        with tree() as t:
            t.joins("sub/file.txt\x00.png", "sub/file.txt", "\x00", "a\x00b/c")

    def test_symlink_to_outside_directory(self):
        with tree() as t:
            t.joins("out_dir", "in_link", "out_dir/secret.txt", "abs_out/secret.txt", "abs_out")

    def test_symlink_to_outside_file_and_dangling(self):
        with tree() as t:
            t.joins("out_file", "dangling_out", "sub/file.txt", "sub/../out_file", "in_link/../dangling_out")

    def test_sibling_with_shared_prefix(self):
        with tree() as t:
            t.joins("../base-evil/x", "prefix_link", "base-evil", "prefix_link/payload.sh", "../base")

    def test_base_must_be_an_existing_directory(self):
        with tree() as t:
            for base in (os.path.join(t.base, "nope"), t.base, t.inside("sub", "file.txt"), t.inside("sub"),
                         os.path.join(t.base, "dangling_out")):
                t.join("x", base=base)
