"""检查的机器：checks/in_process.py 在检查的进程里运行脚本（看到的和新进程一样，运行完什么也不留下）；
kit_helpers.Measured 用 checks/measured.json 里记下的结果；KitCopy 的副本用完改回原样再给下一个检查；
run_checks.py 的子进程按队列领模块。"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from in_process import run_script
import kit_helpers
from kit_helpers import KIT_FILES, KIT_PYTHON, ROOT, KitCopy, clean_env, needs_symlinks, shipped_source, snapshot, write_temp

# 一个会做各种事的小脚本：stdout 和 stderr 交替写、读 stdin、看环境变量和当前文件夹、改全局状态、按参数退出
SCRIPT = r'''
import os, sys
import helper
helper.COUNT += 1
print("out 1")
print("err 1", file=sys.stderr)
print("out 2", repr(sys.stdin.read()), os.environ.get("KIT_X"), os.path.basename(os.getcwd()), helper.COUNT)
sys.stdout.flush()
print("err 2", file=sys.stderr)
sys.path.insert(0, "/nowhere")
os.environ["LEFT_BEHIND"] = "1"
how = sys.argv[1]
if how == "raise":
    raise ValueError("坏了")
sys.exit({"none": None, "text": "再见", "big": 258, "minus": -1}.get(how, 0))
'''


class InProcessTest(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.folder = Path(directory.name) / "kit"
        self.folder.mkdir()
        self.script = write_temp(self.folder, "tool.py", SCRIPT)
        write_temp(self.folder, "helper.py", "COUNT = 0\n")

    def both(self, how, merge, **extra):
        """(本进程里的结果, 真的子进程的结果)，都是 (退出码, stdout, stderr) 字节。"""
        env = clean_env(KIT_X="x", **extra)
        typed = b"typed\r\nmore\rlone CR\n"   # 管道里的 \r 原样读到（Windows 上才转换换行）
        inside = run_script("tool.py", [how], typed, cwd=self.folder, env=env, merge_stderr=merge)   # 相对路径从 cwd 算起
        done = subprocess.run(KIT_PYTHON + ["tool.py", how], input=typed, cwd=self.folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge else subprocess.PIPE, timeout=60)
        return inside, (done.returncode, done.stdout, b"" if merge else done.stderr)

    def test_output_order_exit_codes_and_tracebacks_are_a_process_s(self):
        for how, merge, extra in [(how, True, {}) for how in ("none", "text", "big", "minus", "raise")] \
                + [("none", False, {}), ("none", True, {"PYTHONUNBUFFERED": "1"})]:   # python -u：stdout 不攒着，先后顺序就不同
            with self.subTest(how=how, merge=merge, extra=extra):
                inside, process = self.both(how, merge, **extra)
                self.assertEqual(inside, process)   # traceback 也一字不差（不带 run_script 那一层）
                if how == "raise":
                    self.assertIn(b"Traceback (most recent call last):", inside[1])

    @unittest.skipIf(sys.platform == "win32", "POSIX 的做法：Windows 的新进程不解析当前文件夹里的链接")
    def test_a_working_folder_behind_a_link_names_the_real_path_like_a_process(self):
        # macOS 的临时目录在链接（/var → /private/var）后面：新进程把相对路径接在解析过链接的 os.getcwd() 后面，
        # traceback 里是真实路径。进程内也用真实路径：用链接的路径，在 Mac 上这一项对不上
        real = self.folder
        self.folder = real.parent / "link"
        self.folder.symlink_to(real, target_is_directory=True)
        inside, process = self.both("raise", True)
        self.assertEqual(inside, process)
        self.assertIn(f'File "{real.resolve() / "tool.py"}"'.encode("utf-8"), inside[1])

    def test_a_second_run_starts_fresh_and_nothing_is_left_behind(self):
        env = clean_env()
        before = (list(sys.path), dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, list(sys.argv))
        first = run_script(self.script, ["none"], b"", cwd=self.folder, env=env)
        second = run_script(self.script, ["none"], b"", cwd=self.folder, env=env)
        self.assertEqual(first, second)   # helper.COUNT 每次从 0 开始：模块是新的
        self.assertIn(b" 1\n", first[1])
        self.assertEqual((list(sys.path), dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, list(sys.argv)), before)
        self.assertNotIn("helper", sys.modules)
        self.assertNotIn("LEFT_BEHIND", os.environ)

    def test_the_kit_s_own_modules_come_from_the_copy_that_runs(self):
        copy = self.folder / "copy"
        copy.mkdir()
        for name in KIT_FILES:   # 资料用发布版的：学生改坏了自己的资料，这一项也不该失败
            (copy / name).write_bytes(shipped_source(name).read_bytes())
        (copy / "model_reply_assistant.py").write_text((ROOT / "model_reply_assistant.py").read_text(encoding="utf-8").replace(
            "例如：试用几天？", "副本里改过的说明"), encoding="utf-8")
        code, _, err = run_script(copy / "retrieval_qa.py", ["--retrieve-only", "   "], env=clean_env())
        self.assertEqual((code, err.decode("utf-8")), (2, "错误：问题是空的。请输入一个问题，副本里改过的说明\n"))
        (copy / "model_reply_assistant.py").unlink()   # 副本缺了文件就是缺了：不会悄悄用上仓库里的那份
        code, _, err = run_script(copy / "retrieval_qa.py", ["--retrieve-only", "试用几天？"], env=clean_env())
        self.assertEqual(code, 1)
        self.assertIn(b"ModuleNotFoundError: No module named 'model_reply_assistant'", err)
        import retrieval_qa
        self.assertEqual(Path(retrieval_qa.__file__).parent, ROOT)   # 检查自己导入的那份原样留着

    def test_deep_json_a_standard_module_shadowed_by_the_copy_and_a_patched_getpass(self):
        draft = '{"status": "draft", "draft": "试用期 7 天", "sources": ["D01#1"], "x": %s}'
        deep = [write_temp(self.folder, f"deep{depth}.json", draft % ("[" * depth + "]" * depth)) for depth in (900, 1300)]
        shipped = ["--documents", str(ROOT / "checks" / "shipped_documents.json")]
        for path in deep:   # 读 JSON 能递归多深和新进程一样：检查自己的调用栈再深（这里多 300 层）也不占脚本的份
            with self.subTest(path=path.name):
                args = [str(ROOT / "retrieval_qa.py"), "试用几天？", "--check-draft", str(path), *shipped]
                done = subprocess.run(KIT_PYTHON + args, capture_output=True, env=clean_env(), timeout=60)
                inside = from_deep_in_the_stack(300, lambda: run_script(args[0], args[1:], env=clean_env()))
                self.assertEqual(inside, (done.returncode, done.stdout, done.stderr))
        copy = self.folder / "copy"
        copy.mkdir()
        for name in KIT_FILES:   # 资料用发布版的：学生改坏了自己的资料，这一项也不该失败
            (copy / name).write_bytes(shipped_source(name).read_bytes())
        write_temp(copy, "heapq.py", "import sys\nprint('学生的 heapq', file=sys.stderr)\n")   # 和标准库同名
        import heapq
        args = ["--retreive-only", "试用几天？"]   # 拼错的选项：提示“是不是 --retrieve-only”要用 difflib，difflib 要用 heapq
        done = subprocess.run(KIT_PYTHON + [str(copy / "retrieval_qa.py"), *args], capture_output=True, env=clean_env(), timeout=60)
        self.assertEqual(run_script(copy / "retrieval_qa.py", args, env=clean_env()), (done.returncode, done.stdout, done.stderr))
        self.assertIs(sys.modules["heapq"], heapq)   # 本进程里的标准库没被副本的文件换掉
        with mock.patch("getpass.getpass", side_effect=AssertionError("不该读取密钥")):   # 检查自己换的 getpass 照样生效
            code, _, err = run_script(ROOT / "model_reply_assistant.py", ["试用几天？"], env=clean_env())
        self.assertEqual(code, 1)
        self.assertIn("AssertionError: 不该读取密钥", err.decode("utf-8"))


def from_deep_in_the_stack(frames, action):
    return action() if frames == 0 else from_deep_in_the_stack(frames - 1, action)


class MeasuredTest(unittest.TestCase):
    """kit_helpers.Measured：checks/measured.json 里记下的结果只给量它的那份代码用；没记下的真的量，量了也不留。"""

    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.folder = Path(directory.name)
        self.code = write_temp(self.folder, "rule.py", "THRESHOLD = 1\n")
        self.shipped_code = kit_helpers.MEASURING_CODE
        for patcher in (mock.patch.object(kit_helpers, "MEASURED", self.folder / "measured.json"),
                        mock.patch.object(kit_helpers, "MEASURING_CODE", [self.code])):
            patcher.start()
            self.addCleanup(patcher.stop)
        kit_helpers.committed_results.cache_clear()
        self.addCleanup(kit_helpers.committed_results.cache_clear)
        self.measured = []

    def measure(self, item):
        self.measured.append(item)
        return [item, "真的量了"]

    def commit(self, fingerprint, value):
        key = kit_helpers.Measured.key(["问题", 1])
        kit_helpers.MEASURED.write_text(json.dumps({"fingerprint": fingerprint, "demo": {key: value}}), encoding="utf-8")
        kit_helpers.committed_results.cache_clear()

    def results(self):
        return kit_helpers.Measured("demo").results([1], lambda item: ["问题", item], self.measure)

    def test_committed_results_are_used_only_for_the_code_they_were_measured_on(self):
        self.commit(kit_helpers.code_fingerprint(), "记下的")
        self.assertEqual((self.results(), self.measured), (["记下的"], []))
        self.code.write_bytes(b"\xef\xbb\xbfTHRESHOLD = 1\r\n")   # Windows 上存过：BOM 和 CRLF 不算改了代码
        kit_helpers.committed_results.cache_clear()
        self.assertEqual((self.results(), self.measured), (["记下的"], []))
        self.code.write_text("THRESHOLD = 2\n", encoding="utf-8")   # 改了一个字：记下的作废，真的量
        kit_helpers.committed_results.cache_clear()
        self.assertEqual(self.results(), [[1, "真的量了"]])
        self.commit("0" * 16, "别的代码量的")
        self.assertEqual(self.results(), [[1, "真的量了"]])
        for broken in ("{", "[]", "", json.dumps({"fingerprint": kit_helpers.code_fingerprint(), "demo": []})):   # 写坏了、样子不对：都当作没记下
            with self.subTest(broken=broken):
                kit_helpers.MEASURED.write_text(broken, encoding="utf-8")
                kit_helpers.committed_results.cache_clear()
                self.assertEqual(self.results(), [[1, "真的量了"]])

    def test_what_is_measured_here_is_not_kept_for_the_next_call(self):
        """记下的只有 checks/measured.json：这一次真的量的（也许量的是被 mock 换掉了函数的代码）不留给下一次。"""
        self.assertEqual(self.results() + self.results(), [[1, "真的量了"]] * 2)
        self.assertEqual(self.measured, [1, 1])

    def test_saving_measures_everything_again_and_records_it(self):
        self.commit(kit_helpers.code_fingerprint(), "记下的")
        with mock.patch.object(kit_helpers.Measured, "saving", {}):
            self.assertEqual(self.results(), [[1, "真的量了"]])
            self.assertEqual(list(kit_helpers.Measured.saving["demo"].values()), [[1, "真的量了"]])

    def test_grounding_eval_uses_the_committed_results_and_measures_a_changed_answer(self):
        import grounding_eval
        kit_helpers.committed_results.cache_clear()
        with mock.patch.object(kit_helpers, "MEASURED", ROOT / "checks" / "measured.json"), \
                mock.patch.object(kit_helpers, "MEASURING_CODE", self.shipped_code):
            cases = [case for case in grounding_eval.load_cases() if case.get("documents") is None][:5]
            with mock.patch.object(grounding_eval, "run_case", side_effect=AssertionError("记下了，不该再量")):
                committed = grounding_eval.evaluate(cases, {})
            self.assertEqual([r.status for r in committed], [r.status for r in grounding_eval.evaluate(cases, {}, details=True)])
            changed = [dict(cases[0], answer=dict(cases[0]["answer"], draft=cases[0]["answer"]["draft"] + "另外，全部免费。"))]
            with mock.patch.object(grounding_eval, "run_case", side_effect=AssertionError("该重新量")):
                self.assertRaises(AssertionError, grounding_eval.evaluate, changed, {})   # 回答改了：这一份真的量


class KitCopyTest(unittest.TestCase):
    @needs_symlinks
    def test_a_returned_copy_is_handed_out_exactly_as_a_new_one(self):
        """检查在副本里改资料、加文件、建链接和命名管道、写字节码；还回来的副本再发出去时，和新复制的一模一样，
        链接到别处的文件也没有被顺手改掉。"""
        used = KitCopy(with_checks=True)
        new = snapshot(used.path)
        self.assertIn(os.path.join("checks", "grade.py"), new)
        self.assertIsNone(new["lessons"])   # 文件夹也记下了
        with tempfile.TemporaryDirectory() as elsewhere:
            outside = write_temp(elsewhere, "outside.json", "[]")
            used.write_records([])
            (used.path / "trick.json").write_text("{}", encoding="utf-8")
            (used.path / "checks" / ".exercise-done").mkdir()
            (used.path / "checks" / ".exercise-done" / "exercise-2.json").write_text("[]", encoding="utf-8")
            (used.path / "lessons" / "glossary.md").unlink()
            (used.path / "mine.json").symlink_to(outside)
            (used.path / "checks" / "eval_questions.json").unlink()
            os.link(outside, used.path / "checks" / "eval_questions.json")   # 硬链接：往里写就改到了别处
            if hasattr(os, "mkfifo"):
                os.mkfifo(used.path / "checks" / ".exercise-progress.json")   # 打开它会一直等：不能碰
            (used.path / "reply_assistant.py").chmod(0o444)   # 内容没变，只是成了只读：下一项检查要能改它
            (used.path / "__pycache__").mkdir()
            (used.path / "__pycache__" / "retrieval_qa.pyc").write_bytes(b"\0")
            used.close()
            again = KitCopy(with_checks=True)
            self.addCleanup(again.close)
            self.assertEqual(again.path, used.path)   # 拿到的正是还回来的那一份
            self.assertEqual(snapshot(again.path), new)
            for folder, _, names in os.walk(again.path):
                for name in names:
                    info = os.lstat(os.path.join(folder, name))
                    self.assertEqual((stat.S_ISREG(info.st_mode), info.st_nlink), (True, 1), name)
            self.assertEqual(Path(outside).read_text(encoding="utf-8"), "[]")   # 没有经硬链接写到别处
            self.assertTrue((again.path / "reply_assistant.py").stat().st_mode & stat.S_IWUSR)
            self.assertEqual(again.original, again.documents.read_bytes())


    def test_a_copy_that_cannot_be_restored_is_not_handed_out(self):
        used = KitCopy()
        new = snapshot(used.path)
        (used.path / "retrieval_qa.py").write_text("# 改坏了\n", encoding="utf-8")
        used.close()
        with mock.patch("kit_helpers.restore", side_effect=PermissionError("删不掉")):
            fresh = KitCopy()
        self.addCleanup(fresh.close)
        self.assertNotEqual(fresh.path, used.path)   # 另复制了一份
        self.assertEqual(snapshot(fresh.path), new)

    @needs_symlinks
    def test_closing_twice_hands_it_out_once_and_a_copy_replaced_by_a_link_is_left_alone(self):
        """红队：关了两次的副本会同时发给两项检查；副本的文件夹被换成链接时，restore 会删掉链接指向的地方。"""
        used = KitCopy()
        used.close()
        used.close()
        first, second = KitCopy(), KitCopy()
        self.addCleanup(first.close)
        self.addCleanup(second.close)
        self.assertNotEqual(first.path, second.path)
        with tempfile.TemporaryDirectory() as elsewhere:
            keep = write_temp(elsewhere, "notes.txt", "别人的东西")
            shutil.rmtree(first.path)
            first.path.symlink_to(elsewhere, target_is_directory=True)
            first.close()
            third = KitCopy()
            self.addCleanup(third.close)
            self.assertNotEqual(third.path, first.path)
            self.assertEqual(Path(keep).read_text(encoding="utf-8"), "别人的东西")

class RunDirTest(unittest.TestCase):
    def test_what_a_run_writes_to_the_temp_dir_goes_with_it(self):
        """这次运行里检查和套件写的临时文件（第 07 课的搜索缓存、临时副本）都在这次运行的目录里，跑完一起删。"""
        program = ("import os, tempfile, kit_helpers\n"
                   "kit_helpers.run_dir()\n"
                   "tempfile.tempdir = None\n"
                   "open(os.path.join(tempfile.gettempdir(), 'search-cache.json'), 'w').close()\n")
        with tempfile.TemporaryDirectory() as directory:
            env = {name: value for name, value in clean_env(TMPDIR=directory, PYTHONPATH=str(ROOT / "checks")).items()
                   if name != "KIT_CHECK_RUN_DIR"}
            done = subprocess.run(KIT_PYTHON + ["-c", program], capture_output=True, env=env, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(os.listdir(directory), [])   # 这次运行的目录连同写进去的文件都删了

    def test_without_a_chosen_temp_dir_a_linux_run_works_in_memory_and_cleans_up(self):
        """Linux 上没设 TMPDIR、TEMP、TMP，内存里的文件夹（这里用一个临时文件夹顶替 /dev/shm）空地方够：这次运行的
        目录建在那里，跑完删掉；以前被杀掉的运行留下的、很久没动过的目录也删掉。别的系统上照常建在系统临时目录里。"""
        from kit_helpers import RUN_PREFIX, STALE_AFTER
        program = ("import os, sys, kit_helpers\n"
                   "kit_helpers.RAM_SCRATCH = sys.argv[1]\n"
                   "kit_helpers.RAM_SCRATCH_MIN_FREE = 0\n"   # 空地方够不够另有一项检查；这台机器的盘快满了也不影响这一项
                   "print(kit_helpers.run_dir())\n")
        with tempfile.TemporaryDirectory() as directory:
            old, recent = Path(directory) / f"{RUN_PREFIX}old", Path(directory) / f"{RUN_PREFIX}recent"
            for left in (old, recent):
                (left / "tmp").mkdir(parents=True)
            os.utime(old, (time.time() - STALE_AFTER - 60,) * 2)
            env = {name: value for name, value in clean_env(PYTHONPATH=str(ROOT / "checks")).items()
                   if name not in ("KIT_CHECK_RUN_DIR", "TMPDIR", "TEMP", "TMP")}
            done = subprocess.run(KIT_PYTHON + ["-c", program, directory], capture_output=True, env=env, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            made = Path(done.stdout.decode("utf-8").strip())
            on_linux = sys.platform.startswith("linux")
            self.assertEqual(made.parent == Path(directory), on_linux, made)
            self.assertEqual(sorted(os.listdir(directory)), [recent.name] if on_linux else [old.name, recent.name])

    @unittest.skipUnless(hasattr(os, "getuid"), "只在类 Unix 系统上用内存里的文件夹")
    def test_only_own_old_run_folders_are_cleared(self):
        from kit_helpers import RUN_PREFIX, STALE_AFTER, clear_stale_runs
        with tempfile.TemporaryDirectory() as directory:
            folder = Path(directory)
            made = {name: folder / name for name in (f"{RUN_PREFIX}old", f"{RUN_PREFIX}recent", f"{RUN_PREFIX}file", "other-old")}
            for name, path in made.items():
                path.write_text("x") if name.endswith("file") else (path / "tmp").mkdir(parents=True)
            for name in (f"{RUN_PREFIX}old", f"{RUN_PREFIX}file", "other-old"):
                os.utime(made[name], (time.time() - STALE_AFTER - 60,) * 2)
            with mock.patch("os.getuid", return_value=os.getuid() + 1):   # 别人的：不碰
                clear_stale_runs(folder)
            self.assertEqual(len(os.listdir(folder)), 4)
            clear_stale_runs(folder)
            self.assertEqual(sorted(os.listdir(folder)), sorted(set(made) - {f"{RUN_PREFIX}old"}))

    def test_a_chosen_temp_dir_or_too_little_room_keeps_the_system_temp_dir(self):
        from kit_helpers import RAM_SCRATCH_MIN_FREE, scratch_parent
        roomy, cramped = mock.Mock(free=RAM_SCRATCH_MIN_FREE), mock.Mock(free=RAM_SCRATCH_MIN_FREE - 1)
        with tempfile.TemporaryDirectory() as directory, mock.patch("kit_helpers.RAM_SCRATCH", directory), \
                mock.patch("sys.platform", "linux"):
            cases = [({}, roomy, directory), ({"TMPDIR": directory}, roomy, None), ({"TEMP": directory}, roomy, None),
                     ({}, cramped, None), ({}, OSError("没有这个文件夹"), None)]
            for env, usage, expected in cases:
                with self.subTest(env=env, usage=usage), mock.patch.dict(os.environ, env), \
                        mock.patch("shutil.disk_usage", side_effect=[usage]):
                    for name in {"TMPDIR", "TEMP", "TMP"} - set(env):
                        os.environ.pop(name, None)
                    self.assertEqual(scratch_parent(), expected)
            with mock.patch("sys.platform", "darwin"), mock.patch.dict(os.environ):
                for name in ("TMPDIR", "TEMP", "TMP"):
                    os.environ.pop(name, None)
                self.assertIsNone(scratch_parent())   # macOS、Windows 上没有 /dev/shm：不找


def can_take_a_terminal():
    """能不能开一个伪终端、让子进程把它当作控制终端（类 Unix 系统上的 termios.TIOCSCTTY）。"""
    try:
        import termios
    except ImportError:   # Windows
        return False
    return hasattr(termios, "TIOCSCTTY") and hasattr(os, "openpty")


def alive(pid):
    """pid 这个进程还在不在（已经退出、只等收尸的也算不在）。只在类 Unix 系统上用。"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # 还在进程表里：看它是不是已经死了、只等父进程收尸（Linux 的 /proc 才看得出；别处当作还活着）
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace").split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def iter_tests(suite):
    for item in suite:
        yield from iter_tests(item) if isinstance(item, unittest.TestSuite) else [item]


class WorkQueueTest(unittest.TestCase):
    def test_every_module_runs_once_and_a_broken_one_is_a_named_failure(self):
        import run_checks
        names = ["test_markdown", "test_lesson_text", "test_no_such_module"]   # 两个从不跳过的模块：学生改了资料也一样
        with mock.patch("sys.stderr") as stderr:
            (run, failed, skipped), seconds = run_checks.run_in_parallel(names, 2, False)
        report = "".join(call.args[0] for call in stderr.write.call_args_list)
        alone = unittest.defaultTestLoader.loadTestsFromNames(names[:2]).countTestCases()
        self.assertEqual((run, failed, skipped), (alone + 1, 1, 0))
        self.assertIn("Failed to import test module: test_no_such_module", report)   # 坏的模块点名报出来，别的照常跑
        self.assertEqual(len(seconds), alone + 1)   # 每项检查（连同那个坏模块）都报了自己的秒数，谁也没跑两遍

    def test_passed_failed_and_skipped_are_counted_by_what_happened(self):
        """一项通过、一项里两个子检查失败、一个被整个跳过的类里两项：1 passed、2 failed、2 skipped。
        不能用 testsRun 去减：那样这里会算成 0 passed，Python 3.12.1 上（testsRun 不算跳过的）还会是负数。"""
        import run_checks
        probe = ("import unittest\n"
                 "class Good(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
                 "class Bad(unittest.TestCase):\n    def test_two(self):\n"
                 "        for n in (1, 2):\n            with self.subTest(n=n):\n                self.fail('坏了')\n"
                 "@unittest.skip('资料改过')\nclass Skipped(unittest.TestCase):\n"
                 "    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n")
        with tempfile.TemporaryDirectory() as directory:
            write_temp(directory, "count_probe.py", probe)
            with mock.patch.object(sys, "path", [directory] + sys.path):
                outcome = run_checks.run_names(["count_probe"], False)
            sys.modules.pop("count_probe", None)
        run, failed, skipped = outcome["counts"]
        self.assertEqual((run - failed - skipped, failed, skipped), (1, 2, 2))

    def test_a_split_module_is_queued_class_by_class_and_nothing_is_left_out(self):
        import run_checks
        for split in run_checks.SPLIT:
            with self.subTest(module=split):
                units = run_checks.queue_units(["test_markdown", split])
                self.assertEqual(units[0], "test_markdown")
                self.assertGreater(len(units), 2)
                whole = unittest.defaultTestLoader.loadTestsFromName(split)
                parts = [test.id() for unit in units[1:] for test in iter_tests(unittest.defaultTestLoader.loadTestsFromName(unit))]
                self.assertEqual(sorted(parts), sorted(test.id() for test in iter_tests(whole)))   # 每项都在，谁也不跑两遍
        with mock.patch.object(run_checks, "SPLIT", ("test_no_such_module",)):   # 导入不了：整个排进去，由子进程报错
            self.assertEqual(run_checks.queue_units(["test_no_such_module"]), ["test_no_such_module"])

    @unittest.skipUnless(can_take_a_terminal(), "这个系统上没有伪终端（Windows），或不能让进程把它当作控制终端")
    def test_ctrl_c_in_a_terminal_stops_every_worker_and_says_so_once(self):
        """在（伪）终端里跑，按 Ctrl-C：终端把 SIGINT 送到前台那一组。子进程各自成一个会话，只有主进程收到；它停掉子进程
        连同检查开的进程，只说一句“已中断”，退出码 130，临时目录删掉。子进程也收到的话，会报出一串没坏的“失败”和
        traceback；只给子进程分组还不够，检查自己开的、自成会话的进程也要停掉（不然一个要睡 600 秒的会一直留到睡完）。"""
        import select
        probe = ("import os, subprocess, sys, time, unittest, kit_helpers\n"   # 检查开进程的样子和真的检查一样
                 "class Slow(unittest.TestCase):\n"
                 "    def test_waits(self):\n"
                 "        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
                 "                                 start_new_session=kit_helpers.has_terminal())\n"
                 "        with open(os.environ['PROBE_STARTED'], 'a') as f:\n"
                 "            f.write(f'{os.getpid()} {child.pid}\\n')\n"
                 "        time.sleep(60)\n")
        program = ("import sys, kit_helpers, run_checks\n"
                   "kit_helpers.run_dir()\n"
                   "sys.exit(kit_helpers.run_tool(lambda argv: run_checks.run_in_parallel(['slow_probe'] * 2, 2, False)[0][1]))\n")
        # 自成一个会话，伪终端是它的控制终端：和在终端里敲命令一样
        take_terminal = "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); os.execv(sys.executable, sys.argv[1:])"
        with tempfile.TemporaryDirectory() as probes, tempfile.TemporaryDirectory() as scratch:
            write_temp(probes, "slow_probe.py", probe)
            started = Path(probes) / "started"
            env = {name: value for name, value in clean_env(TMPDIR=scratch, PROBE_STARTED=str(started),
                                                             PYTHONPATH=os.pathsep.join([str(ROOT / "checks"), probes])).items()
                   if name != "KIT_CHECK_RUN_DIR"}
            master, slave = os.openpty()
            driver = subprocess.Popen(KIT_PYTHON + ["-c", take_terminal] + KIT_PYTHON + ["-c", program], env=env,
                                      stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
            os.close(slave)
            shown = b""
            try:
                deadline = time.monotonic() + 30
                while not (started.exists() and started.read_text(encoding="utf-8").count("\n") == 2) and time.monotonic() < deadline:
                    time.sleep(0.02)
                os.write(master, b"\x03")   # 按 Ctrl-C
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:   # 读到终端的另一头全关了：谁还开着它（没停掉的进程），就读到时限
                    if select.select([master], [], [], 0.1)[0]:
                        try:
                            chunk = os.read(master, 4096)
                        except OSError:   # Linux 上另一头全关了是这样
                            break
                        if not chunk:
                            break
                        shown += chunk
                try:
                    driver.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.fail(f"按了 Ctrl-C，过了 20 秒还没退出。终端上显示的：\n{shown.decode('utf-8', errors='replace')[-2000:]}")
            finally:
                if driver.poll() is None:
                    driver.kill()
                os.close(master)
            processes = [int(pid) for pid in started.read_text(encoding="utf-8").split()]   # 两个子进程和它们各自开的进程
            self.assertEqual(len(processes), 4)
            text = shown.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("^C", "")   # 终端把 Ctrl-C 回显成 ^C
            self.assertEqual((driver.returncode, text.strip()), (130, "已中断（Ctrl-C）。"))
            deadline = time.monotonic() + 10
            while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertEqual([pid for pid in processes if alive(pid)], [])   # 正在跑检查的子进程连同检查开的进程都停了
            self.assertEqual(os.listdir(scratch), [])   # 这次运行的临时目录删了

    def test_a_worker_that_dies_is_a_failure_and_so_is_every_module_left_unrun(self):
        import run_checks
        with tempfile.TemporaryDirectory() as directory:
            write_temp(directory, "crash_probe.py", "import os\nos._exit(3)\n")   # 导入它的子进程当场退出
            with mock.patch.dict(os.environ, {"PYTHONPATH": directory}), mock.patch("sys.stderr") as stderr:
                (run, failed, _), _ = run_checks.run_in_parallel(["crash_probe", "test_markdown"], 1, False)
        report = "".join(call.args[0] for call in stderr.write.call_args_list)
        self.assertEqual((run, failed), (2, 2))   # 崩掉的那个和没人跑的那个都算失败，不会被当作通过
        self.assertIn("检查模块 crash_probe 没有跑完（子进程退出码 3）", report)
        self.assertIn("检查模块 test_markdown 没有跑", report)


    def test_a_module_that_hangs_is_stopped_and_is_a_failure(self):
        """红队：restore 坏了时一个检查卡在命名管道上，整套检查一直等下去（CI 里要等到 90 分钟的上限）。"""
        import run_checks
        with tempfile.TemporaryDirectory() as directory:
            write_temp(directory, "hang_probe.py", "import time\ntime.sleep(600)\n")   # 导入它的子进程一直不交结果
            with mock.patch.dict(os.environ, {"PYTHONPATH": directory}), mock.patch.object(run_checks, "MODULE_LIMIT", 0.2), \
                    mock.patch("sys.stderr") as stderr:
                started = time.monotonic()
                (run, failed, _), _ = run_checks.run_in_parallel(["hang_probe", "test_markdown"], 1, False)
        report = "".join(call.args[0] for call in stderr.write.call_args_list)
        self.assertLess(time.monotonic() - started, 30)
        self.assertEqual((run, failed), (2, 2))
        self.assertIn("检查模块 hang_probe 超过 0.2 秒还没跑完，停掉了", report)
        self.assertIn("检查模块 test_markdown 没有跑", report)

    def test_a_stale_documents_variable_in_the_shell_is_dropped(self):
        """红队：shell 里留着 KIT_CHECK_DOCUMENTS 时，不加 --documents 的运行（连 CI=true 的）悄悄跳过了几项。"""
        import run_checks
        from kit_helpers import in_ci, student_documents
        stale = os.path.join(tempfile.gettempdir(), "上次的.json")
        with mock.patch.dict(os.environ, {"KIT_CHECK_DOCUMENTS": stale, "CI": "true"}):
            self.assertIsNone(run_checks.student_file(None))
            self.assertEqual(student_documents(), ROOT / "retrieval_documents.json")
            self.assertTrue(in_ci())
            given = run_checks.student_file("学生.json")
            self.assertEqual((given, student_documents()), (Path(os.path.abspath("学生.json")),) * 2)
            self.assertFalse(in_ci())   # 老师检查学生的文件：不按 CI 的规矩


if __name__ == "__main__":
    unittest.main()
