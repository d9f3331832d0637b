"""课文记录必须是真实命令的真实输出：执行 lessons/*.md 和 README.md 里的每个 console 块。"""
import contextlib
import io
import json
import shlex
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from kit_helpers import ROOT, SHIPPED_DOCUMENTS, run_kit, write_temp
from transcripts import check_markdown, default_documents, parse_markdown


class LessonTranscriptTest(unittest.TestCase):
    def test_every_lesson_and_the_readme(self):
        documents = default_documents()
        self.assertIn(ROOT / "lessons" / "03-retrieval-qa.md", documents)
        for path in documents:
            with self.subTest(path=path.name):
                failures, commands = check_markdown(path)
                if path.name != "glossary.md":   # 术语表只有文字
                    self.assertGreater(commands, 0, f"{path.name} 没有可执行的 console 块")
                self.assertEqual(failures, [], "\n\n".join(failures))


class OneLinerTest(unittest.TestCase):
    """课文里把结果接给 `python3 -c` 的一行程序，搜索失败时也不能冒出 traceback。新开的终端忘了设 SEARCH_API_URL，
    stdout 上是 status 为 error 的 JSON，没有 cited、dropped 这些字段（不是 KeyError: 'cited'）。"""

    def test_every_one_liner_prints_something_for_a_failed_search(self):
        question = "请问记得笔记的免费试用期是多久？"
        with tempfile.TemporaryDirectory() as directory:
            answer = write_temp(directory, "answer.json", '{"status": "draft", "draft": "试用 14 天 [1]。", "sources": ["1"]}')
            failures = [run_kit(["--web", *mode, question], documents=None)[1] for mode in (["--retrieve-only"], ["--check-draft", str(answer)])]
        self.assertEqual([json.loads(out)["status"] for out in failures], ["error", "error"])   # 确实是搜索失败的样子
        programs = [shlex.split(step[2].rpartition("| python3 -c ")[2])[0] for path in default_documents()
                    for step in parse_markdown(path) if step[0] == "run" and "| python3 -c " in step[2]]
        self.assertGreaterEqual(len(programs), 3)   # 第 07 课有三条；找不到说明课文的写法变了，这项检查要跟着改
        for program in programs:
            for out in failures:
                with self.subTest(program=program, out=out[:40]):
                    printed = io.StringIO()
                    with mock.patch("sys.stdin", io.StringIO(out)), contextlib.redirect_stdout(printed):
                        exec(program, {})   # 出了异常就是这项检查的错误，unittest 会把 traceback 报出来
                    self.assertTrue(printed.getvalue().startswith("error"), printed.getvalue())


class SameInAProcessTest(unittest.TestCase):
    """课文的命令平常在本进程里运行（transcripts.run_command）。第 01 课和 README 的命令每条都开真的子进程再跑一遍，
    照样和课文一字不差：课文记录没有哪种命令只在进程内查过。"""

    def test_lesson_01_and_the_readme_in_real_processes(self):
        for path in (ROOT / "lessons" / "01-reply-assistant.md", ROOT / "README.md"):
            with self.subTest(path=path.name):
                failures, commands = check_markdown(path, processes=True)
                self.assertGreater(commands, 0)
                self.assertEqual(failures, [], "\n\n".join(failures))


class RunnerTest(unittest.TestCase):
    """执行器本身：输出不一致时必须失败，并指出课文文件和行号。"""

    def lesson(self, text):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        return write_temp(directory.name, "lesson.md", text)

    def test_wrong_output_is_reported_with_file_and_line(self):
        path = self.lesson("# 课\n\n```console\n$ python retrieval_qa.py --retrieve-only 价格是多少？\n没有命中任何片段。\n"
                           '{\n  "question": "价格是多少？",\n  "status": "retrieved"\n}\n```\n')
        failures, commands = check_markdown(path)
        self.assertEqual(commands, 1)
        self.assertEqual(len(failures), 1)
        self.assertTrue(failures[0].startswith("lesson.md:4: "), failures[0])
        self.assertIn('-  "status": "retrieved"', failures[0])

    def test_line_endings_and_trailing_spaces_are_ignored_but_text_is_not(self):
        good = self.lesson("```console\r\n$ python -c \"print('你好   ')\"   \r\n你好\r\n```\r\n")
        self.assertEqual(check_markdown(good), ([], 1))
        bad = self.lesson("```console\n$ python -c \"print('你好')\"\n您好\n```\n")
        failures, _ = check_markdown(bad)
        self.assertEqual(len(failures), 1)
        self.assertTrue(failures[0].startswith("lesson.md:2: "), failures[0])

    def test_exit_code_line(self):
        path = self.lesson("```console\n$ python retrieval_qa.py --retrieve-only \"   \"\n"
                           "错误：问题是空的。请输入一个问题，例如：试用几天？\n[0]\n```\n")
        failures, _ = check_markdown(path)
        self.assertEqual(len(failures), 1)
        self.assertIn("退出码应当是 0，实际是 2", failures[0])
        path.write_text(path.read_text(encoding="utf-8").replace("[0]", "[2]"), encoding="utf-8")
        self.assertEqual(check_markdown(path), ([], 1))

    def test_typed_answer_pipes_file_edits_and_restore(self):
        mini = '[{"id": "M1", "title": "价格", "text": "基础版每月 99 元。", "keywords": ["价格"]}]'
        hit_output = ("命中 1 个片段：\n  M1  价格  命中词：价格\n{\n"
                      '  "question": "价格是多少？",\n  "status": "retrieved",\n  "model_called": false,\n'
                      '  "hits": [\n    {\n      "id": "M1",\n      "title": "价格",\n'
                      '      "text": "基础版每月 99 元。",\n      "matched": [\n        "价格"\n      ]\n    }\n  ],\n'
                      '  "note": "只做了检索（--retrieve-only）：没有调用模型，也没有读取密钥。"\n}\n')
        path = self.lesson(
            f"```json file=mini.json\n{mini}\n```\n"
            "```console\n$ python retrieval_qa.py --retrieve-only --documents mini.json\n问题：价格是多少？\n"
            + hit_output + "```\n"
            "```json remove=mini.json\n{\"id\": \"M1\"}\n```\n"
            "```console\n$ echo 价格是多少？ | python retrieval_qa.py --retrieve-only --documents mini.json\n"
            "错误：资料文件 mini.json：应当有 1–100 条记录，实际有 0 条。\n[2]\n```\n"
            "<!-- transcript: restore -->\n"
            "```console\n$ python retrieval_qa.py --retrieve-only 价格是多少？ --documents mini.json\n"
            "错误：资料文件 mini.json：找不到这个文件。提示：--documents 的相对路径从当前文件夹算起，"
            "不是从 retrieval_qa.py 所在的文件夹。\n[2]\n```\n")
        steps = parse_markdown(Path(path))
        self.assertEqual([step[0] for step in steps], ["file", "run", "remove", "run", "restore", "run"])
        self.assertEqual(check_markdown(path), ([], 3))

    def test_only_trace_durations_may_differ(self):
        script = "import sys; print('[trace] 资料  1.5 ms  5 条记录', file=sys.stderr)"
        same = self.lesson(f"```console\n$ python -c \"{script}\"\n[trace] 资料  987.0 ms  5 条记录\n```\n")
        self.assertEqual(check_markdown(same), ([], 1))
        for wrong in ("[trace] 资料  1.5 ms  6 条记录", "[trace] 检索  1.5 ms  5 条记录", "资料  1.5 ms  5 条记录"):
            with self.subTest(wrong=wrong):
                lesson = self.lesson(f"```console\n$ python -c \"{script}\"\n{wrong}\n```\n")
                self.assertEqual(len(check_markdown(lesson)[0]), 1)

    def test_restore_returns_to_the_last_backup(self):
        path = self.lesson(
            "```json file=note.json\n\"first\"\n```\n<!-- transcript: backup -->\n"
            "```json file=note.json\n\"second\"\n```\n<!-- transcript: restore -->\n"
            "```console\n$ python -c \"import pathlib; print(pathlib.Path('note.json').read_text('utf-8').strip())\"\n"
            "\"first\"\n```\n")
        self.assertEqual(check_markdown(path), ([], 1))

    def test_restore_removes_what_was_added_and_rewrites_what_changed(self):
        show = ("import os, pathlib; print(sorted(os.listdir('made')) if os.path.isdir('made') else '-', "
                "os.path.exists('new.txt'), pathlib.Path('lessons/glossary.md').read_text('utf-8')[:4])")
        glossary = (ROOT / "lessons" / "glossary.md").read_text(encoding="utf-8")[:4]
        path = self.lesson(
            "```console\n$ python -c \"import os; os.makedirs('made/deeper'); open('made/a.txt', 'w').close()\"\n```\n"
            "<!-- transcript: backup -->\n"
            "```json file=new.txt\n\"x\"\n```\n```json file=lessons/glossary.md\n\"改过\"\n```\n"
            "```console\n$ python -c \"import os; os.makedirs('made/later'); open('made/b.txt', 'w').close()\"\n```\n"
            "<!-- transcript: restore -->\n"
            f"```console\n$ python -c \"{show}\"\n['a.txt', 'deeper'] False {glossary}\n```\n")
        self.assertEqual(check_markdown(path), ([], 3))

    def test_each_document_starts_from_the_shipped_kit(self):
        """一个进程里的课文共用一份副本：上一篇写的文件、建的文件夹、改的资料，下一篇都看不到。"""
        records = len(json.loads(SHIPPED_DOCUMENTS.read_text(encoding="utf-8-sig")))
        first = self.lesson("```json file=note.json\n\"first\"\n```\n```json remove=retrieval_documents.json\n{\"id\": \"D01#1\"}\n```\n"
                            "```console\n$ python -c \"import os; os.makedirs('checks/made'); print(len(os.listdir('checks')) > 0)\"\nTrue\n```\n")
        self.assertEqual(check_markdown(first), ([], 1))
        show = ("import json, os, pathlib; print(os.path.exists('note.json'), os.path.exists('checks/made'), "
                "len(json.loads(pathlib.Path('retrieval_documents.json').read_text('utf-8-sig'))))")
        second = self.lesson(f"```console\n$ python -c \"{show}\"\nFalse False {records}\n```\n")
        self.assertEqual(check_markdown(second), ([], 1))

    def test_a_shared_copy_that_cannot_be_restored_is_replaced(self):
        from unittest import mock
        import transcripts
        first = self.lesson("```json file=note.json\n\"first\"\n```\n")
        self.assertEqual(check_markdown(first), ([], 0))
        show = self.lesson("```console\n$ python -c \"import os; print(os.path.exists('note.json'))\"\nFalse\n```\n")
        with mock.patch.object(transcripts, "restore", side_effect=PermissionError("删不掉")):
            self.assertEqual(check_markdown(show), ([], 1))   # 另复制了一份原样的

    def test_record_listing_must_match_the_file(self):
        good = self.lesson('```json\n{"id": "D02#1", "title": "部署说明 · 服务器资源",\n'
                           ' "text": "私有部署需要一台 4 核 CPU、8 GB 内存的服务器，另外为资料索引预留 50 GB 磁盘空间。",\n'
                           ' "keywords": ["部署", "服务器", "内存", "配置"]}\n```\n')
        self.assertEqual(check_markdown(good), ([], 0))
        bad = self.lesson('```json\n{"id": "D02#1", "title": "部署说明 · 服务器资源",\n'
                          ' "text": "私有部署需要一台 8 核 CPU、8 GB 内存的服务器，另外为资料索引预留 50 GB 磁盘空间。",\n'
                          ' "keywords": ["部署", "服务器", "内存", "配置"]}\n```\n')
        self.assertEqual(check_markdown(bad)[0],
                         ["lesson.md:1: 课文展示的记录 D02#1 和此时 retrieval_documents.json 里的不一样"])


    def test_a_crlf_bom_copy_of_the_shipped_data_runs_the_lessons_as_printed(self):
        # 学生的编辑器把副本都存成了 CRLF、加了 BOM：课文里 --trace 报的字节数仍是发布时的
        from unittest import mock
        import transcripts
        shipped = transcripts.SHIPPED_DOCUMENTS.read_bytes().removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n")
        with tempfile.TemporaryDirectory() as directory:
            windows = write_temp(directory, "shipped.json", b"\xef\xbb\xbf" + shipped.replace(b"\n", b"\r\n"))
            with mock.patch.object(transcripts, "SHIPPED_DOCUMENTS", windows):
                kit = transcripts.make_copy(directory)
            self.assertEqual((kit / "retrieval_documents.json").read_bytes(), shipped)

    def test_a_code_excerpt_must_appear_in_its_file(self):
        good = self.lesson("```python from=retrieval_qa.py\ndef check_grounding(draft, sources, hits, question=\"\", evidence=None, library=None):\n```\n")
        self.assertEqual(check_markdown(good), ([], 0))
        bad = self.lesson("```python from=retrieval_qa.py\ndef check_grounding(draft, sources):\n```\n")
        self.assertEqual(check_markdown(bad)[0], ["lesson.md:1: 课文摘录的代码在 retrieval_qa.py 里找不到（代码改了，课文要跟着改）"])
        plain = self.lesson("```python\nprint('只是示意，不核对')\n```\n")
        self.assertEqual(check_markdown(plain), ([], 0))

class ReadmeTest(unittest.TestCase):
    TEST_COMMAND = "python3 -W error checks/run_checks.py"

    def test_the_first_screen_is_what_a_newcomer_needs(self):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        first = readme.split("\n## ")[:2]   # 标题和简介，加上“两条命令”那一节
        self.assertLessEqual("\n## ".join(first).count("\n") + 1, 45)
        self.assertIn("`python3`", first[1])
        self.assertIn("`py`", first[1])
        self.assertIn("lessons/01-reply-assistant.md", first[1])

    def test_readme_gives_both_commands_and_ci_runs_the_test_command(self):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        self.assertIn("$ python3 retrieval_qa.py --retrieve-only 试用几天？\n", readme)
        self.assertIn(self.TEST_COMMAND, readme)
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
        self.assertIn('-W error checks/run_checks.py', ci.split("set -euo pipefail", 1)[1])

    def test_readme_documents_every_exit_code(self):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |", "| 130 |"):
            self.assertIn(code, readme)


if __name__ == "__main__":
    unittest.main()


class FollowAlongTest(unittest.TestCase):
    """照课文一路做下来的学生（留着练习一的关键词）看到的数字，课文要在命令之前说出来，而且说对。"""

    def test_lesson_05_names_the_trace_byte_count_of_a_student_who_kept_exercise_1(self):
        import json
        import re
        from kit_helpers import SHIPPED_DOCUMENTS, run_kit
        edit = next(step for step in parse_markdown(ROOT / "lessons" / "03-retrieval-qa.md")
                    if step[0] == "edit" and json.loads(step[3])["id"] == "D01#1")
        shipped = SHIPPED_DOCUMENTS.read_text(encoding="utf-8")
        before = json.loads(shipped)[0]["keywords"]
        added = [word for word in json.loads(edit[3])["keywords"] if word not in before]
        self.assertEqual(added, ["免费用多久"])
        # 学生手动改：在 D01#1 的关键词数组末尾写上 , "免费用多久"，别的字节一个不动
        line = "\"keywords\": [" + ", ".join(json.dumps(word, ensure_ascii=False) for word in before) + "]"
        edited = shipped.replace(line, line[:-1] + "".join(f", {json.dumps(word, ensure_ascii=False)}" for word in added) + "]", 1)
        self.assertNotEqual(edited, shipped)
        lesson = (ROOT / "lessons" / "05-untrusted-materials.md").read_text(encoding="utf-8")
        stated = re.search(r"第一行的字节数：下面是发布版资料的 (\d+)，留着练习一关键词的是 (\d+)。\n\n```json file=bad.json", lesson)
        self.assertIsNotNone(stated, "第 05 课在第一个 --trace 之前要说出两种资料的字节数")
        self.assertEqual(int(stated.group(1)), len(shipped.encode("utf-8")))
        self.assertEqual(int(stated.group(2)), len(edited.encode("utf-8")))
        with tempfile.TemporaryDirectory() as directory:
            data = write_temp(directory, "kept.json", edited)
            answer = write_temp(directory, "bad.json", '{"status": "draft", "draft": "体验版的试用期是 30 天。", "sources": ["D01#1"]}')
            _, _, err = run_kit(["试用几天？", "--check-draft", str(answer), "--trace", "--documents", str(data)])
        self.assertIn(f"5 条记录，{stated.group(2)} 字节", err.splitlines()[0])

    def test_lesson_06_says_before_its_blocks_what_a_student_who_kept_exercise_1_sees(self):
        import acceptance
        lesson = (ROOT / "lessons" / "06-evaluation.md").read_text(encoding="utf-8")
        said = lesson.index("留着练习一关键词的：评测是后面“再量一次”的样子，验收的最后一行命中 `D01#1`、草稿待测")
        self.assertLess(said, lesson.index("```"))   # 在本课第一个代码块之前
        with tempfile.TemporaryDirectory() as directory:
            from kit_helpers import SHIPPED_DOCUMENTS
            shipped = SHIPPED_DOCUMENTS.read_text(encoding="utf-8")
            kept = write_temp(directory, "kept.json", shipped.replace('"几天"]', '"几天", "免费用多久"]', 1))
            last = acceptance.CASES[-1]
            row = acceptance.judge(last, *acceptance.run_case(last["question"], False, str(kept)), False)
        self.assertEqual(last["question"], "能免费用多久？")
        self.assertEqual((row[1], row[-1]), ("D01#1", "检索通过，草稿待测"))
