"""命令行约定：stdout 只有一个 JSON 对象、状态、退出码、提示走 stderr、从别的目录运行、启动要轻。"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from kit_helpers import (KIT_PYTHON, ON_SHIPPED, ROOT, SCRIPT, KitCopy, assert_same_in_a_process, clean_env, interrupt_kit, needs_symlinks, run_json,
                         run_kit, write_temp)

FIELDS = ["question", "status", "model_called", "hits", "note"]
# 只检索的路径不许导入的模块：网络和读密钥的都不要
FORBIDDEN = ("urllib", "http", "ssl", "_ssl", "socket", "_socket", "getpass")


class OutputTest(unittest.TestCase):
    def test_retrieved_question(self):
        code, result, err = run_json(["--retrieve-only", "试用几天？"])
        self.assertEqual(code, 0, err)
        self.assertEqual(list(result), FIELDS)
        self.assertEqual(result["question"], "试用几天？")
        self.assertEqual(result["status"], "retrieved")
        self.assertIs(result["model_called"], False)
        self.assertEqual([hit["id"] for hit in result["hits"]], ["D01#1"])
        self.assertEqual(list(result["hits"][0]), ["id", "title", "text", "matched"])
        self.assertIn("没有调用模型", result["note"])

    def test_no_hits_question(self):
        code, result, _ = run_json(["--retrieve-only", "价格是多少？"])
        self.assertEqual(code, 0)
        self.assertEqual((result["status"], result["hits"], result["model_called"]), ("no_hits", [], False))
        self.assertIn("没有调用模型", result["note"])

    def test_zero_hits_without_retrieve_only_still_calls_no_model(self):
        code, result, _ = run_json(["价格是多少？"])
        self.assertEqual(code, 0)
        self.assertEqual((result["status"], result["model_called"]), ("no_hits", False))

    def test_stdout_is_utf8_indented_and_not_ascii_escaped(self):
        code, out, _ = run_kit(["--retrieve-only", "试用几天？"])
        self.assertIn('"question": "试用几天？"', out)
        self.assertIn('\n  "status": "retrieved"', out)
        self.assertNotIn("\\u", out)

    def test_utf8_even_when_the_console_says_otherwise(self):
        # 模拟 Windows 旧控制台 / C locale：不重新配置 stdout 就会在打印中文时崩溃
        for env in (clean_env(PYTHONIOENCODING="ascii"),
                    clean_env(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")):
            with self.subTest(env={k: env.get(k) for k in ("PYTHONIOENCODING", "LC_ALL")}):
                # 问题从 stdin 读：C locale 下命令行参数本身就无法按 UTF-8 解码，那不是本检查要测的
                code, result, err = run_json(["--retrieve-only"], stdin="试用几天？\n", env=env)
                self.assertEqual(code, 0, err)
                self.assertEqual(result["hits"][0]["id"], "D01#1")
                self.assertIn("命中词：几天、试用", err)

    def test_pipes_into_json_tool(self):
        first = subprocess.run(KIT_PYTHON + [str(SCRIPT), "--retrieve-only", "部署后会自动发送吗？", *ON_SHIPPED],
                               capture_output=True, env=clean_env(), timeout=60)
        second = subprocess.run(KIT_PYTHON + ["-m", "json.tool"], input=first.stdout, capture_output=True, env=clean_env(),
                                timeout=60)   # 和上一条一样不带 shell 里的 PYTHONIOENCODING：套件的 stdout 总是 UTF-8
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(json.loads(second.stdout)["status"], "retrieved")

    def test_human_summary_goes_to_stderr(self):
        _, _, err = run_kit(["--retrieve-only", "部署后会自动发送吗？"])
        self.assertEqual(err.splitlines(), ["命中 2 个片段：",
                                            "  D01#2  产品规则 · 发送边界  命中词：发送、自动",
                                            "  D02#1  部署说明 · 服务器资源  命中词：部署"])


class PromptTest(unittest.TestCase):
    def test_question_from_stdin_with_prompt_on_stderr(self):
        code, result, err = run_json(["--retrieve-only"], stdin="试用几天？\n")
        self.assertEqual(code, 0)
        self.assertEqual(result["question"], "试用几天？")
        self.assertTrue(err.startswith("问题：试用几天？\n"), err)

    def test_windows_line_ending_and_bom_from_a_pipe(self):
        code, result, err = run_json(["--retrieve-only"], stdin="\ufeff试用几天？\r\n")
        self.assertEqual((code, result["question"]), (0, "试用几天？"))
        self.assertTrue(err.startswith("问题：试用几天？\n"), err)   # 回显也不带 BOM（不然显示成 \ufeff试用几天？）

    def test_blank_question_exits_2(self):
        for args, stdin in ((["--retrieve-only", "   "], ""), (["--retrieve-only"], "\n"), (["--retrieve-only"], "")):
            with self.subTest(args=args, stdin=stdin):
                code, out, err = run_kit(args, stdin=stdin)
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertIn("错误：问题是空的。", err)

    def test_stdin_that_is_not_utf8(self):
        done = subprocess.run(KIT_PYTHON + [str(SCRIPT), "--retrieve-only", *ON_SHIPPED], input="试用几天？\n".encode("gbk"),
                              capture_output=True, env=clean_env(), timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("从标准输入读到的问题不是 UTF-8 文本", done.stderr.decode("utf-8"))
        self.assertNotIn(b"Traceback", done.stderr)

    @unittest.skipIf(sys.platform == "win32", "Windows 没有 SIGINT 可以直接发给子进程")
    def test_ctrl_c_at_the_prompt_exits_130_without_traceback(self):
        def at_the_prompt(process):
            self.assertEqual(process.stderr.read(len("问题：".encode("utf-8"))), "问题：".encode("utf-8"))
            time.sleep(0.05)

        code, out, err = interrupt_kit(["--retrieve-only"], at_the_prompt)
        self.assertEqual(code, 130)
        self.assertEqual(out, b"")
        self.assertNotIn(b"Traceback", err)
        self.assertIn("已中断".encode("utf-8"), err)
        # 检查本身被放到后台跑（shell 让它忽略 SIGINT）时，试的仍是在终端里按 Ctrl-C
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            code, _, err = interrupt_kit(["--retrieve-only"], at_the_prompt)
        finally:
            signal.signal(signal.SIGINT, previous)
        self.assertEqual(code, 130, err)


class UsageTest(unittest.TestCase):
    def test_usage_errors_exit_2_with_one_line(self):
        for args in (["--no-such-option"], ["试用", "几天"], ["--documents"], ["--retrieve"]):
            with self.subTest(args=args):
                code, out, err = run_kit(args)
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertEqual(len(err.strip().splitlines()), 1)
                self.assertTrue(err.startswith("错误："), err)
                self.assertIn("用法：python3 retrieval_qa.py", err)

    def test_bad_timeout_is_refused_before_anything_else(self):
        for value in ("0", "-1", "abc", "3601"):
            with self.subTest(value=value):
                code, out, err = run_kit(["--retrieve-only", "价格是多少？", "--timeout", value])
                self.assertEqual((code, out), (2, ""))
                self.assertEqual(err, f"错误：--timeout 应当是大于 0、不超过 3600 的秒数，实际是 {value}。\n")

    def test_an_option_with_a_value_given_twice_names_both_values(self):
        # 改命令时忘了删旧的 --documents：不能悄悄用后一个，学生会以为在读前一个文件
        for args, said in ((["--documents", "a.json", "--documents=b.json"], "--documents 写了两次（a.json 和 b.json）"),
                           (["--timeout", "5", "--timeout", "9"], "--timeout 写了两次（5 和 9）")):
            with self.subTest(args=args):
                code, out, err = run_kit(["--retrieve-only", "试用几天？", *args])
                self.assertEqual((code, out), (2, ""))
                self.assertTrue(err.startswith(f"错误：{said}，不知道该用哪一个：只留一个。"), err)
        code, out, err = run_kit(["--retrieve-only", "--documents", "a.json", "--documents", "b.json", "--", "-h"])   # -h 是问题
        self.assertEqual((code, out), (2, ""))
        self.assertIn("--documents 写了两次", err)
        for args in (["--trace", "--trace"], ["--timeout=5", "--timeout", "5"]):   # 不带值的、两个值一样的：没有歧义，照常
            with self.subTest(args=args):
                code, out, _ = run_kit(["--retrieve-only", *args, "试用几天？"])
                self.assertEqual((code, json.loads(out)["status"]), (0, "retrieved"))
        code, out, _ = run_kit(["--timeout", "5", "--timeout", "6", "-h"])   # 要看帮助：照旧显示帮助
        self.assertEqual(code, 0)
        self.assertIn("用法：python3 retrieval_qa.py", out)
        code, _, err = run_kit(["--timeout", "5", "--retrieve-only", "--timeout="])   # 第二个的值是空的：说空值，不说写了两次
        self.assertEqual(code, 2)
        self.assertIn("--timeout 的值是空的", err)

    def test_mistyped_option_gets_a_suggestion(self):
        code, _, err = run_kit(["--retrive-only", "试用几天？"])
        self.assertEqual(code, 2)
        self.assertTrue(err.startswith("错误：不认识的选项 --retrive-only（是不是想写 --retrieve-only？）。"), err)

    def test_an_option_typed_with_chinese_dashes_is_named(self):
        """中文输入法把 -- 打成 —、——、－－：不说“多了一个参数…问题里有空格时请用引号”，那样学生找不到错在哪。"""
        for typed, meant in (("—retrieve-only", "--retrieve-only"), ("——retrieve-only", "--retrieve-only"),
                             ("－－retrieve-only", "--retrieve-only"), ("—documents=x.json", "--documents"),
                             ("–retreive-only", "--retrieve-only"), ("−−trace", "--trace")):   # 最后一个是从网页复制来的减号
            with self.subTest(typed=typed):
                code, out, err = run_kit([typed, "试用几天？"])
                self.assertEqual((code, out), (2, ""))
                self.assertTrue(err.startswith(f"错误：{typed} 的横线不是半角的「-」（中文输入法打的，或从网页复制来的）："
                                               f"要写 {meant}（"), err)
        # 以破折号开头的问题仍是问题：横线后面不像选项（有中文）；--help 照旧显示帮助
        for question in ("——试用几天？", "—documents里写什么？"):
            with self.subTest(question=question):
                code, out, _ = run_kit(["--retrieve-only", question])
                self.assertEqual((code, json.loads(out)["status"]), (0, "retrieved" if "试用" in question else "no_hits"))
        self.assertEqual(run_kit(["--help", "—trace"])[0], 0)
        code, out, err = run_kit(["试用几天？", "--check-draft", "—check-draft.json"])   # 选项的值不是选项：照常去读这个文件
        self.assertEqual((code, json.loads(out)["status"]), (4, "rejected"))
        self.assertIn("—check-draft.json", err)
        self.assertNotIn("横线", err)

    def test_help_documents_flags_and_every_exit_code(self):
        code, out, _ = run_kit(["--help"])
        self.assertEqual(code, 0)
        for text in ("--retrieve-only", "--documents PATH", "0 正常", "1 需要人工复核", "2 用法或资料文件错误",
                     "3 模型调用失败", "4 模型回答被拒绝", "130 被 Ctrl-C 中断"):
            self.assertIn(text, out)


class RedTeamTest(unittest.TestCase):
    """红队从命令行找到的：每一种都是一类输入，在一处关上。"""
    KEY = "sk-Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF"

    def test_lesson_01_s_script_masks_keys_and_escapes_control_characters_too(self):
        # 三个脚本共用的入口 run_cli 装上 ShownSafely：第 01 课的脚本也装，不然问题里的密钥、ESC 原样写出去
        env = clean_env(DEEPSEEK_API_KEY=self.KEY)
        code, out, _ = run_kit([f"试用几天？{self.KEY}\x1b[2J"], script=ROOT / "reply_assistant.py", env=env)
        self.assertEqual(code, 0)
        self.assertNotIn(self.KEY[3:15], out)
        self.assertNotIn("\x1b", out)
        code, _, err = run_kit(["a", self.KEY], script=ROOT / "reply_assistant.py", env=env)
        self.assertEqual(code, 2)
        self.assertNotIn(self.KEY[3:15], err)

    def test_the_start_of_a_non_json_answer_never_shows_part_of_a_key(self):
        # “开头是「…」”只说前 20 个字：先截再抹，截下来的半截密钥（不到 12 个字）就认不出了
        with tempfile.TemporaryDirectory() as directory:
            answer = write_temp(directory, "d.txt", "前前前前前前前前前" + self.KEY[3:] + " 后")
            code, out, err = run_kit(["试用几天？", "--check-draft", str(answer)], env=clean_env(DEEPSEEK_API_KEY=self.KEY))
        self.assertEqual(code, 4)
        self.assertNotIn(self.KEY[3:9], out + err)

    def test_a_line_break_inside_an_argument_never_makes_a_second_error_line(self):
        for args in (["--retrieve-only", "--x\n错误：伪造的第二行"], ["--retrieve-only", "试用", "b\nc"], ["--retrieve-only", "试用", "--timeout", "1\r\n2"]):
            with self.subTest(args=args):
                code, out, err = run_kit(args)
                self.assertEqual((code, out, len(err.splitlines())), (2, "", 1), err)
        with tempfile.TemporaryDirectory() as directory:   # 被拒绝的回答：problems 的每条也是一行
            code, out, err = run_kit(["试用几天？", "--check-draft", os.path.join(directory, "a\nb.json")])
        self.assertEqual(code, 4)
        self.assertTrue(all("\n" not in problem for problem in json.loads(out)["problems"]))
        self.assertNotIn("\nb.json", err)   # 路径里的换行没有把哪一行断成两行

    def test_a_question_of_invisible_characters_only_is_empty(self):
        for question in ("\u3164", "\u115f", "\ufe0f", "\u034f", "\u200b \u3164"):   # 填充字、变体选择符、组合用的看不见的字符
            with self.subTest(question=ascii(question)):
                self.assertEqual(run_kit(["--retrieve-only", question])[:2], (2, ""))

    def test_an_option_where_a_value_should_be_is_a_missing_value(self):
        # --check-draft 后面紧跟着 --timeout：是缺了值，不能把“--timeout”当文件名去读、说回答被拒绝（退出码 4）
        code, out, err = run_kit(["--check-draft", "--timeout", "5", "试用几天？"])
        self.assertEqual((code, out), (2, ""))
        self.assertTrue(err.startswith("错误：--check-draft 后面缺少一个值。"), err)

    def test_a_question_that_starts_with_a_dash_says_how_to_ask_it(self):
        code, _, err = run_kit(["--retrieve-only", "-1 天能退款吗"])
        self.assertEqual(code, 2)
        self.assertIn("问题以「-」开头时，前面先写 -- ", err)
        self.assertEqual(run_kit(["--retrieve-only", *ON_SHIPPED, "--", "-1 天能退款吗"])[0], 0)

    @needs_symlinks
    def test_a_link_loop_is_named_as_a_loop(self):
        with tempfile.TemporaryDirectory() as directory:
            os.symlink("b.json", os.path.join(directory, "a.json"))
            os.symlink("a.json", os.path.join(directory, "b.json"))
            code, _, err = run_kit(["--retrieve-only", "试用", "--documents", os.path.join(directory, "a.json")])
        self.assertEqual(code, 2)
        self.assertIn("链接绕成了圈", err)

    def test_the_keywords_hint_goes_with_a_keywords_problem_only(self):
        with tempfile.TemporaryDirectory() as directory:
            path = write_temp(directory, "d.json", '[{"id": 1, "title": "t", "text": "x", "keywords": "试用, 体验版"}]')
            code, _, err = run_kit(["--retrieve-only", "试用", "--documents", str(path)])
            self.assertEqual(code, 2)
            self.assertNotIn("写成", err)   # 错的是 id：不提 keywords 该怎么写
            write_temp(directory, "d.json", '[{"id": "A", "title": "t", "text": "x", "keywords": "试用, 体验版"}]')
            self.assertIn('提示：写成 ["试用", "体验版"]', run_kit(["--retrieve-only", "试用", "--documents", str(path)])[2])


class WorkingDirectoryTest(unittest.TestCase):
    def test_runs_from_another_directory(self):
        kit = KitCopy()   # 副本里的资料是发布版：脚本旁边的默认资料文件，和从哪里启动无关
        self.addCleanup(kit.close)
        with tempfile.TemporaryDirectory() as elsewhere:
            code, out, _ = kit.run(["--retrieve-only", "试用几天？"], cwd=elsewhere)
        self.assertEqual((code, json.loads(out)["hits"][0]["id"]), (0, "D01#1"))

    def test_documents_option_is_relative_to_the_cwd(self):
        with tempfile.TemporaryDirectory() as elsewhere:
            records = [{"id": "X1", "title": "价格", "text": "基础版每月 99 元。", "keywords": ["价格"]}]
            write_temp(elsewhere, "mine.json", json.dumps(records, ensure_ascii=False))
            code, result, _ = run_json(["--retrieve-only", "价格是多少？", "--documents", "mine.json"], cwd=elsewhere)
            self.assertEqual((code, [h["id"] for h in result["hits"]]), (0, ["X1"]))
            code, result, _ = run_json(["--retrieve-only", "--documents=mine.json", "价格是多少？"], cwd=elsewhere)
            self.assertEqual(result["hits"][0]["id"], "X1")

    def test_file_is_read_afresh_at_every_start(self):
        with tempfile.TemporaryDirectory() as elsewhere:
            path = write_temp(elsewhere, "d.json", '[{"id": "A", "title": "t", "text": "x", "keywords": ["甲"]}]')
            self.assertEqual(len(run_json(["--retrieve-only", "甲乙", "--documents", str(path)])[1]["hits"]), 1)
            write_temp(elsewhere, "d.json", '[{"id": "A", "title": "t", "text": "x", "keywords": ["丙"]}]')
            self.assertEqual(run_json(["--retrieve-only", "甲乙", "--documents", str(path)])[1]["hits"], [])


class StartupCostTest(unittest.TestCase):
    """只检索的路径不导入网络模块和 getpass。用 -S 跳过 site，免得机器上的 .pth 文件先把它们导入了。"""

    def imported(self, args, stdin=""):
        done = subprocess.run([sys.executable, "-S", "-X", "importtime"] + args, input=stdin.encode("utf-8"),
                              capture_output=True, env=clean_env(), timeout=60, cwd=ROOT)
        names = set()
        for line in done.stderr.decode("utf-8", errors="replace").splitlines():
            if line.startswith("import time:") and line.count("|") == 2:
                names.add(line.rsplit("|", 1)[1].strip())
        return done.returncode, names

    def assert_light(self, names):
        heavy = sorted(n for n in names if n.split(".")[0] in FORBIDDEN)
        self.assertEqual(heavy, [])

    def test_importtime_sees_imports_at_all(self):
        # 防止检查空转：同样的办法必须能看见一次真实的网络模块导入
        code, names = self.imported(["-c", "import urllib.request"])
        self.assertEqual(code, 0)
        self.assertIn("urllib.request", names)
        self.assertIn("socket", names)

    def test_retrieve_only_paths_import_no_network_module(self):
        for args, stdin in (([str(SCRIPT), "--retrieve-only", "试用几天？"], ""),
                            ([str(SCRIPT), "--retrieve-only"], "部署后会自动发送吗？\n"),
                            ([str(SCRIPT), "价格是多少？"], ""),
                            ([str(SCRIPT), "--retrieve-only", "x", "--documents", "missing.json"], "")):
            with self.subTest(args=args[1:]):
                code, names = self.imported(args, stdin)
                self.assertIn(code, (0, 2))
                self.assertIn("json", names)
                self.assert_light(names)



def closing(fd):
    """子进程启动前关掉自己的一个文件描述符，就像 shell 里的 >&-（1）或 2>&-（2）。"""
    return lambda: os.close(fd)


@unittest.skipIf(sys.platform == "win32", "关掉文件描述符再启动子进程是 POSIX 的做法")
class ClosedStreamTest(unittest.TestCase):
    """结果写不出去时退出码 5，绝不是 1（1 是“有一份待复核的草稿”）；stderr 被关掉时 stdout 里仍然只有一个 JSON 对象。"""

    COMMANDS = [[str(SCRIPT), "--retrieve-only", "试用几天？", *ON_SHIPPED], [str(ROOT / "model_reply_assistant.py"), "--help"],
                [str(ROOT / "reply_assistant.py")]]

    def run_script(self, args, **streams):
        done = subprocess.run(KIT_PYTHON + args, env=clean_env(), timeout=60, **streams)
        return done.returncode, (done.stderr or b"").decode("utf-8")

    def test_closed_stdout_does_nothing_and_exits_5(self):
        for args in self.COMMANDS:
            with self.subTest(args=args):
                code, err = self.run_script(args, stderr=subprocess.PIPE, preexec_fn=closing(1))
                self.assertEqual((code, err), (5, "错误：标准输出被关掉了，结果没处可写，什么也没做。\n"))

    @unittest.skipUnless(os.path.exists("/dev/full"), "这个系统没有 /dev/full")
    def test_a_full_disk_exits_5_with_one_line(self):
        for args in self.COMMANDS:
            with self.subTest(args=args), open("/dev/full", "w", encoding="utf-8") as full:
                code, err = self.run_script(args, stdout=full, stderr=subprocess.PIPE)
                self.assertEqual(code, 5)
                self.assertEqual(err.splitlines()[-1], "错误：写不了输出：设备或磁盘已满（No space left on device）。")
                self.assertNotIn("Traceback", err)

    def test_a_reader_that_leaves_early_is_not_an_error(self):
        reader, writer = os.pipe()
        os.close(reader)   # 读的一方已经走了，就像 … | head 读够了
        try:
            code, err = self.run_script(self.COMMANDS[0], stdout=writer, stderr=subprocess.PIPE)
        finally:
            os.close(writer)
        self.assertEqual(code, 5)
        self.assertNotIn("Traceback", err)
        self.assertNotIn("错误", err)

    def test_closed_stderr_leaves_exactly_one_json_object_on_stdout(self):
        done = subprocess.run(KIT_PYTHON + self.COMMANDS[0], env=clean_env(), timeout=60, stdout=subprocess.PIPE,
                              preexec_fn=closing(2))
        self.assertEqual(done.returncode, 0)
        self.assertEqual(json.loads(done.stdout.decode("utf-8"))["status"], "retrieved")


    def test_an_unwritable_stderr_loses_only_the_messages(self):
        # stderr 开着却写不进去（2>/dev/full、只读打开的，比如 pyenv 的 python3 垫片在 2>&- 时留下的）：提示丢掉，结果照常，退出码按结果；
        # 不能第一句提示写不出去就当作“结果写不出去”，stdout 上什么也没有，退出码 1
        with tempfile.TemporaryDirectory() as directory:
            draft = write_temp(directory, "review.json", json.dumps(
                {"status": "draft", "draft": "新团队可以免费试用 30 天。", "sources": ["D01#1"]}, ensure_ascii=False))
            cases = [(["--retrieve-only", "试用几天？"], "retrieved", 0), (["试用几天？", "--check-draft", str(draft)], "needs_review", 1)]
            for (args, status, exit_code), opened in zip(cases, (("/dev/full", "w"), (os.devnull, "r"))):
                if not os.path.exists(opened[0]):
                    continue
                with self.subTest(stderr=opened), open(opened[0], opened[1], encoding="utf-8") as stderr:
                    done = subprocess.run(KIT_PYTHON + [str(SCRIPT), *args, *ON_SHIPPED], env=clean_env(), timeout=60,
                                          stdout=subprocess.PIPE, stderr=stderr)
                    self.assertEqual((done.returncode, json.loads(done.stdout.decode("utf-8"))["status"]), (exit_code, status))


class TerminalSafetyTest(unittest.TestCase):
    """别人给的文字（问题、保存的回答、模型的话）写出去之前都经过 model_reply_assistant.ShownSafely：终端控制字符和方向控制字符
    变成看得见的 \\uXXXX（stdout 上的 JSON 照样合法、读回来一字不差），看着像密钥的换成 ***。"""

    HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202e\u2066\u200b\r"

    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.directory = directory.name

    def test_every_unsafe_character_is_written_as_a_visible_escape(self):
        import io
        from model_reply_assistant import ShownSafely
        out = io.StringIO()
        ShownSafely(out).write("换行\n和制表\t照旧" + self.HOSTILE)
        self.assertEqual(out.getvalue(), "换行\n和制表\t照旧\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202e\\u2066"
                                         "\\u200b\\u000d")

    def test_a_stderr_that_cannot_be_written_is_dropped_but_stdout_is_not(self):
        import io
        from model_reply_assistant import ShownSafely

        class Full(io.StringIO):
            def write(self, text):
                raise OSError(28, "No space left on device")

        stderr = ShownSafely(Full(), quiet=True)
        for text in ("正在请求模型……\n", "文件名 \udcff.json 读不了\n"):   # 第二句里有不是 UTF-8 的文件名：空设备也不能因此出错
            stderr.write(text)
        stderr.flush()
        self.assertEqual(stderr.stream.name, os.devnull)   # 换成了空设备
        stderr.stream.close()
        with self.assertRaises(OSError):   # stdout 写不出去照旧报出，交给 run_cli 变成退出码 5
            ShownSafely(Full()).write("{}\n")

    def test_a_hostile_piped_question_is_shown_escaped_and_stored_as_sent(self):
        question = "试用几天？" + self.HOSTILE.replace("\r", "")
        done = subprocess.run(KIT_PYTHON + [str(SCRIPT), "--retrieve-only", *ON_SHIPPED],
                              input=(question + "\n").encode("utf-8"), capture_output=True, env=clean_env(), timeout=60)
        err = done.stderr.decode("utf-8")
        self.assertEqual(done.returncode, 0, err)
        for char in "\x1b\x07\u009b\u202e\u2066\u200b":
            self.assertNotIn(char, err)
            self.assertNotIn(char.encode("utf-8"), done.stdout)
        self.assertIn("问题：试用几天？\\u001b]0;pwned\\u0007", err)
        self.assertEqual(json.loads(done.stdout.decode("utf-8"))["question"], question)

    def test_a_saved_draft_with_bidi_and_c1_characters_reaches_stdout_escaped(self):
        draft = "体验版的试用期是 7 天。\u202e天 7\u202c\u009b"
        path = write_temp(self.directory, "saved.json", json.dumps({"status": "draft", "draft": draft, "sources": ["D01#1"]},
                                                                  ensure_ascii=False))
        _, out, err = run_kit(["试用几天？", "--check-draft", str(path)])   # 进程内：写出去的字节一样（上一项是真的子进程）
        for char in "\u202e\u202c\u009b":
            self.assertNotIn(char, out + err)
        self.assertEqual(json.loads(out)["draft"], draft)

    def test_key_shaped_text_never_leaves_the_process(self):
        key = "sk-" + "0123456789abcdef" * 2
        split = key[:10] + "\u200b" + key[10:]
        env_file = write_temp(self.directory, ".env", f"DEEPSEEK_API_KEY={key}\nLOCAL_MODEL_API_KEY=Bearer {key[3:]}\n")
        code, out, err = run_kit(["试用几天？", "--check-draft", str(env_file)])
        self.assertEqual(code, 4)
        self.assertIn("DEEPSEEK_API_KEY=sk-***", err)
        self.assertNotIn(key[3:], err + out)
        path = write_temp(self.directory, "leak.json", json.dumps(
            {"status": "draft", "draft": f"试用期 7 天，密钥是 {split}", "sources": ["D01#1"]}, ensure_ascii=False))
        _, out, err = run_kit(["试用几天？", "--check-draft", str(path)])
        shown = out + err
        self.assertIn("sk-***", shown)
        self.assertNotIn(key[10:], shown)

    def test_a_question_of_only_invisible_characters_is_an_empty_question(self):
        for args in (["--retrieve-only", "\u200b\u200d\u2060"], ["\u202e \ufeff"]):
            with self.subTest(args=args):
                self.assertEqual(run_kit(args), (2, "", "错误：问题是空的。请输入一个问题，例如：试用几天？\n"))

    def test_the_configured_key_is_found_even_split_by_zero_width_characters(self):
        import model_reply_assistant
        key = "sk-" + "a1b2c3d4" * 4
        for joiner in ("\u200b", "\u2060", "\ufeff", " \n"):
            with self.subTest(joiner=repr(joiner)):
                self.assertEqual(model_reply_assistant.scrub(f"key={key[:12]}{joiner}{key[12:]}.", key), "key=***.")


class SameInAProcessTest(unittest.TestCase):
    """这一组的命令多数在本进程里运行（kit_helpers.run_kit）。抽几条有代表性的，在真的子进程里再跑一遍，
    退出码、stdout、stderr 必须一字不差：这一组没有哪种命令只在进程内查过。"""

    def test_a_miss_a_typed_question_a_usage_error_and_lesson_01_s_help(self):
        assert_same_in_a_process(self, [(["--retrieve-only", "价格是多少？"], {}),
                                        (["--retrieve-only"], {"stdin": "试用几天？\n"}), (["--frobnicate"], {}),
                                        (["--help"], {"script": ROOT / "reply_assistant.py"})])


if __name__ == "__main__":
    unittest.main()
