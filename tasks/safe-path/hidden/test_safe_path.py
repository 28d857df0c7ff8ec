"""Judge tests for safe_join: containment, symlinks, and ordinary names."""

import os
import tempfile
import unittest

from solution import safe_join


class SafeJoinCase(unittest.TestCase):
    """Builds   root/base/{sub/file.txt, in_link -> sub, out_dir -> ../outside,
    out_file -> ../outside/secret.txt, dangling_out -> ../outside/missing,
    prefix_link -> ../base-evil}   plus root/outside and root/base-evil."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        root = os.path.realpath(self._tmp.name)
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

    def tearDown(self):
        self._tmp.cleanup()

    def inside(self, *parts):
        return os.path.join(self.base, *parts)

    def assertRejected(self, user_path, base=None):
        with self.assertRaises(ValueError, msg=repr(user_path)):
            safe_join(base or self.base, user_path)


class TestAccepted(SafeJoinCase):
    def test_plain_file(self):
        self.assertEqual(safe_join(self.base, "sub/file.txt"), self.inside("sub", "file.txt"))

    def test_missing_target_is_allowed(self):
        self.assertEqual(safe_join(self.base, "sub/new/upload.bin"), self.inside("sub", "new", "upload.bin"))

    def test_empty_and_dot_mean_base(self):
        self.assertEqual(safe_join(self.base, ""), self.base)
        self.assertEqual(safe_join(self.base, "."), self.base)
        self.assertEqual(safe_join(self.base, "sub/.."), self.base)

    def test_dotdot_that_stays_inside(self):
        self.assertEqual(safe_join(self.base, "sub/../sub/file.txt"), self.inside("sub", "file.txt"))
        self.assertEqual(safe_join(self.base, "a/b/../../c"), self.inside("c"))

    def test_names_containing_dots_are_ordinary(self):
        self.assertEqual(safe_join(self.base, "..hidden"), self.inside("..hidden"))
        self.assertEqual(safe_join(self.base, "v1..2/notes...txt"), self.inside("v1..2", "notes...txt"))
        self.assertEqual(safe_join(self.base, "sub/..."), self.inside("sub", "..."))

    def test_result_is_normalised(self):
        result = safe_join(self.base, "sub//./file.txt")
        self.assertEqual(result, self.inside("sub", "file.txt"))
        self.assertTrue(os.path.isabs(result))

    def test_inside_symlink_is_resolved(self):
        self.assertEqual(safe_join(self.base, "in_link/file.txt"), self.inside("sub", "file.txt"))
        self.assertEqual(safe_join(self.base, "in_link"), self.inside("sub"))

    def test_base_given_unnormalised_or_through_symlink(self):
        alias = os.path.join(os.path.dirname(self.base), "alias")
        os.symlink(self.base, alias)
        self.assertEqual(safe_join(alias, "sub/file.txt"), self.inside("sub", "file.txt"))
        self.assertEqual(safe_join(self.base + os.sep, "sub"), self.inside("sub"))
        self.assertEqual(safe_join(os.path.join(self.base, "sub", ".."), "sub"), self.inside("sub"))


class TestRejected(SafeJoinCase):
    def test_parent_traversal(self):
        for p in ("..", "../outside/secret.txt", "sub/../../outside", "a/b/../../../x", "../../../../etc/passwd"):
            self.assertRejected(p)

    def test_obfuscated_traversal(self):
        # "...." is an ordinary name; stripping "../" out of it must not create a real "..".
        self.assertEqual(safe_join(self.base, "....//....//etc/passwd"), self.inside("....", "....", "etc", "passwd"))
        for p in ("./../outside/secret.txt", "sub/./../.././outside", ".../../../outside", "..././../../outside"):
            self.assertRejected(p)

    def test_absolute_paths(self):
        self.assertRejected("/etc/passwd")
        self.assertRejected(self.outside)
        self.assertRejected(self.inside("sub", "file.txt"))

    def test_nul_byte(self):
        self.assertRejected("sub/file.txt\x00.png")
        self.assertRejected("\x00")

    def test_symlink_to_outside_directory(self):
        self.assertRejected("out_dir")
        self.assertRejected("out_dir/secret.txt")
        self.assertRejected("abs_out/secret.txt")

    def test_symlink_to_outside_file_and_dangling(self):
        self.assertRejected("out_file")
        self.assertRejected("dangling_out")
        self.assertRejected("sub/../out_file")

    def test_sibling_with_shared_prefix(self):
        self.assertRejected("../base-evil/x")
        self.assertRejected("prefix_link")
        self.assertRejected("prefix_link/payload.sh")

    def test_base_must_be_an_existing_directory(self):
        self.assertRejected("x", base=os.path.join(self.base, "nope"))
        self.assertRejected("x", base=self.inside("sub", "file.txt"))


if __name__ == "__main__":
    unittest.main()
