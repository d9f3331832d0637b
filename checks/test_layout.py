"""代码按课程排列：第 01 课的文件只有第 01 课，retrieval_qa.py 依次是第 03、04、05 课和选读的第 07 课，常量先定义后使用。

这些检查读的是三个脚本的源代码（用 ast 解析），不运行它们。
"""
import ast
import functools
import re
import shutil
import subprocess
import unittest

from kit_helpers import ROOT, SHIPPED_FILES

SCRIPTS = ("reply_assistant.py", "model_reply_assistant.py", "retrieval_qa.py")
# 第 01 课的文件里只许有这些：基线资料和提示词、本课的小程序（三个脚本共用的外壳在第 02 课的文件里）
LESSON_01_NAMES = {"MATERIALS", "ANSWER_EXAMPLE", "SYSTEM_PROMPT", "material_block", "build_messages", "USAGE", "run"}
# 每一课的代表：它们必须定义在 retrieval_qa.py 里那一课的分节下面
SECTION_OF = {"load_documents": "03", "retrieve": "03", "build_materials": "03",
              "check_grounding": "04", "numbers_in": "05", "mark_grounding": "04",
              "instruction_like": "05", "near_duplicates": "05", "document_warnings": "05", "trace_line": "05"}
# 问答这条路上每个意思只用一个词：请求是 generate / ask_model，检查是 check_*；这些旧名字不该再出现
RETIRED_NAMES = ("call_model", "answer_with_model", "get_answer", "judge_reply", "judge_saved_reply", "review_sources",
                 # 一个意思一个词：造异常的叫 make_*，用中文说出一件事的改叫 describe_*，解析字符串的叫 parse_json
                 "fail", "kit_error", "rejected", "call_failed", "not_sent", "describe", "describe_failure", "explain_json_error",
                 "explain_missing", "http_failure", "redirect_refusal", "os_reason", "error_text", "server_message", "read_json",
                 "check_answer", "checked_handlers")
DIVIDER = re.compile(r"^# -{5,} 第 (\d\d) 课：", re.M)


def source(name):
    return (ROOT / name).read_text(encoding="utf-8")


def parsed(name):
    """套件根目录下这个文件的语法树。"""
    return parsed_text(source(name))


@functools.lru_cache(maxsize=None)
def parsed_text(text):
    """这段源代码的语法树：同样的文字只解析一次（这一组十几项检查都要它，一份两千行的文件解析一次要二三十毫秒）。
    树是共用的：检查只读不改。"""
    return ast.parse(text)


def top_level_names(tree):
    """模块顶层定义的名字 -> 行号（函数、类、赋值）。"""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node.lineno
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node.lineno
    return names


class ShippedFilesTest(unittest.TestCase):
    def test_the_list_of_shipped_files_is_what_git_tracks(self):
        # 套件不是 git 仓库时，grade.py 和建班用 kit_helpers.SHIPPED_FILES 分清套件的文件和做练习时加的：加、删文件时一起改它
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True) if shutil.which("git") else None
        if listed is None or listed.returncode != 0:
            self.skipTest("不是 git 仓库（下载的压缩包）或没装 git：没有可比的")
        self.assertEqual(sorted(SHIPPED_FILES), sorted(name for name in listed.stdout.decode("utf-8").split("\0") if name))


class LessonOneFileTest(unittest.TestCase):
    def test_lesson_01_file_is_small(self):
        self.assertLessEqual(source("reply_assistant.py").count("\n"), 120)

    def test_lesson_01_file_defines_only_lesson_01(self):
        names = set(top_level_names(parsed("reply_assistant.py")))
        self.assertEqual(names - LESSON_01_NAMES, set(), "第 01 课的文件里多出了后面几课的东西")
        self.assertLessEqual({"MATERIALS", "build_messages", "run"}, names)

    def test_lesson_01_file_has_no_text_machinery(self):
        text = source("reply_assistant.py")
        for word in ("unicodedata", "NFKC", "shingle", "INSTRUCTION", "JSONDecodeError", "numbers_in"):
            with self.subTest(word=word):
                self.assertNotIn(word, text)


class LessonOrderTest(unittest.TestCase):
    def test_retrieval_file_has_the_three_lesson_dividers_in_order(self):
        self.assertEqual(DIVIDER.findall(source("retrieval_qa.py")), ["03", "04", "05"])

    def test_each_lesson_lives_under_its_own_divider(self):
        text = source("retrieval_qa.py")
        starts = {match.group(1): text.count("\n", 0, match.start()) + 1 for match in DIVIDER.finditer(text)}
        ends = dict(zip(sorted(starts), sorted(starts.values())[1:] + [text.count("\n") + 1]))
        names = top_level_names(parsed("retrieval_qa.py"))
        for name, lesson in SECTION_OF.items():
            with self.subTest(name=name):
                self.assertIn(name, names)
                self.assertTrue(starts[lesson] < names[name] < ends[lesson],
                                f"{name} 在第 {names[name]} 行，不在第 {lesson} 课那一节")

    def test_run_is_where_the_lessons_meet_after_all_sections(self):
        text = source("retrieval_qa.py")
        last_divider = max(text.count("\n", 0, m.start()) + 1 for m in DIVIDER.finditer(text))
        self.assertGreater(top_level_names(parsed("retrieval_qa.py"))["run"], last_divider)

    def test_no_top_level_name_is_defined_twice(self):
        # 后一个定义悄悄盖掉前一个：两份同名的函数、一个新常量盖掉抹密钥用的同名常量，都不报错
        for script in SCRIPTS:
            names = []
            for node in parsed(script).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    names.append(node.name)
                elif isinstance(node, ast.Assign):
                    names += [name.id for target in node.targets for name in ast.walk(target) if isinstance(name, ast.Name)]
            with self.subTest(script=script):
                self.assertGreater(len(names), 5)
                self.assertEqual(sorted({name for name in names if names.count(name) > 1}), [])

    def test_retired_names_are_gone(self):
        for script in SCRIPTS:
            names = top_level_names(parsed(script))
            with self.subTest(script=script):
                self.assertEqual([name for name in RETIRED_NAMES if name in names], [])


@functools.lru_cache(maxsize=None)
def functions():
    """三个脚本里的每个函数（连同嵌在函数里的）：[(脚本, 函数, 函数里的全部节点)]。命名的三条规则都要走一遍，只列一次。"""
    return [(script, node, list(ast.walk(node))) for script in SCRIPTS for node in ast.walk(parsed(script))
            if isinstance(node, ast.FunctionDef)]


class NamingTest(unittest.TestCase):
    """一个意思一个词：造异常交给调用处 raise 的函数叫 make_*；check_* 只抛出或返回发现的问题。"""

    def test_what_is_raised_through_a_function_is_built_by_a_make_function(self):
        raised = set()
        for script, function, inside in functions():
            for node in inside:
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name) \
                        and node.exc.func.id[0].islower():
                    raised.add(node.exc.func.id)
        self.assertGreaterEqual(len(raised), 4)   # 防止检查空转：确实找到了 raise make_…(…)
        self.assertEqual({name for name in raised if not name.startswith("make_")}, set())

    def test_a_function_that_returns_an_exception_says_so(self):
        builders = set()
        for script, function, inside in functions():
            for node in inside:
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                        and node.value.func.id in ("NoAnswer", "KitError", "BadResponse", "JsonProblem"):
                    builders.add(function.name)
        self.assertGreaterEqual(len(builders), 3)
        self.assertEqual({name for name in builders if not name.startswith("make_")}, set())

    def test_check_functions_raise_or_return_findings(self):
        returning = set()
        for script, function, inside in functions():
            if function.name.startswith("check_"):
                if any(isinstance(node, ast.Return) and node.value is not None for node in inside):
                    returning.add(function.name)
        self.assertEqual(returning, {"check_grounding"})   # 它返回 {status, problems, hints}：发现的问题


@functools.lru_cache(maxsize=None)
def first_uses(tree):
    """每个名字第一次被读到的行号（两组检查都要它，同一棵树只走一遍）。"""
    uses = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses[node.id] = min(uses.get(node.id, node.lineno), node.lineno)
    return uses


class ForwardReferenceTest(unittest.TestCase):
    """常量（全大写的名字）先定义后使用：读到一处用法时，它的定义已经在上面了。"""

    def test_constants_are_defined_before_their_first_use(self):
        for script in SCRIPTS:
            tree = parsed(script)
            defined, uses = top_level_names(tree), first_uses(tree)
            late = {name: (uses[name], line) for name, line in defined.items()
                    if name.isupper() and name in uses and uses[name] < line}
            with self.subTest(script=script):
                self.assertEqual(late, {}, "名字: (第一次使用的行, 定义的行)")

    def test_the_rule_sees_a_late_constant(self):
        # 防止检查空转：一个先用后定义的常量必须被找出来
        tree = ast.parse("def f():\n    return LIMIT\n\n\nLIMIT = 3\n")
        uses, defined = first_uses(tree), top_level_names(tree)
        self.assertEqual((uses["LIMIT"], defined["LIMIT"]), (2, 5))


class ConstantSourceTest(unittest.TestCase):
    def test_constants_cite_lessons_not_files_students_do_not_have(self):
        for script in SCRIPTS:
            with self.subTest(script=script):
                self.assertNotIn("种子教程", source(script))


class LessonFourCoreTest(unittest.TestCase):
    CORE = ("def check_grounding", "def grounding_findings", "def unsent_id", "def quote_not_in_source", "def misstated_amount",
            "def opposite_of_quote", "class Rule")

    def core_lines(self):
        lines = source("retrieval_qa.py").splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 04 课："))
        divider = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 04 课 · 扩展规则（选读）"))
        return lines, start, divider

    def test_the_lesson_04_core_reads_in_one_sitting_before_its_optional_divider(self):
        lines, start, divider = self.core_lines()
        self.assertGreater(divider, start)
        self.assertLessEqual(divider - start, 200, "第 04 课的核心超过 200 行")
        core = "\n".join(lines[start:divider])
        for name in self.CORE:
            with self.subTest(name=name):
                self.assertIn(name, core)
        self.assertLess(core.index("def check_grounding"), core.index("def quote_not_in_source"))   # 入口在前

    def test_no_name_the_core_uses_is_defined_only_after_its_divider(self):
        self.assertEqual(borrowed_from_optional(source("retrieval_qa.py")), [], "核心用到了只在“选读”里定义的名字")

    def test_the_check_sees_a_name_defined_only_after_the_divider(self):
        text = ("import re\n# ---------- 第 04 课：核心\nREADERS = []\n\ndef core():\n    return later(re, READERS)\n\n"
                "# ---------- 第 04 课 · 扩展规则（选读）\ndef later(*args):\n    return args\n")
        self.assertEqual(borrowed_from_optional(text), ["later"])


def borrowed_from_optional(text):
    """第 04 课的核心（分节线到“选读”分节线之间）用到、却只在“选读”之后才定义的顶层名字。核心读得完：它用的名字
    都定义在核心里、在它前面（第 03 课），或者从第 02 课、第 01 课的文件导入。"""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("# ---------- 第 04 课："))
    divider = next(i for i, line in enumerate(lines, 1) if line.startswith("# ---------- 第 04 课 · 扩展规则（选读）"))
    tree = parsed_text(text)
    before = set(top_level_names(ast.Module(body=[node for node in tree.body if node.lineno < divider], type_ignores=[])))
    before |= {alias.asname or alias.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names}
    used = {node.id for top in tree.body if start < top.lineno < divider for node in ast.walk(top)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return sorted(used & (set(top_level_names(tree)) - before))


class LessonTwoCoreTest(unittest.TestCase):
    def test_lesson_02_file_reads_core_first_and_hardening_after_its_divider(self):
        text = source("model_reply_assistant.py")
        lines = text.splitlines()
        divider = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 02 课 · 加固（选读）"))
        names = top_level_names(parsed("model_reply_assistant.py"))
        for name in ("build_request_body", "generate", "parse_response", "checked_answer", "ask_model"):
            with self.subTest(core=name):
                self.assertLess(names[name], divider + 1)
        for name in ("model_target", "local_base_url", "read_api_key", "send", "open_and_read", "urllib_handlers",
                     "describe_json_error", "describe_http_failure", "ShownSafely"):
            with self.subTest(hardening=name):
                self.assertGreater(names[name], divider + 1)
        order = [names[name] for name in ("ask_model", "build_request_body", "generate", "parse_response", "checked_answer")]
        self.assertEqual(order, sorted(order))   # 入口在前，后面是它走的每一步，和课文的顺序一样
        core_start = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 02 课的核心"))
        first = min(line for name, line in names.items() if not name.isupper())   # 文件里第一个函数或类
        self.assertEqual(first, names["ask_model"])
        self.assertEqual([name for name, line in names.items() if line < core_start + 1], [], "核心之前只有导入")

    def test_each_constant_sits_in_the_section_that_uses_it_first(self):
        # 课的开头不堆着只给加固或命令行用的常量
        for script in ("model_reply_assistant.py", "retrieval_qa.py"):
            text = source(script)
            tree = parsed(script)
            dividers = [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"^# -{5,} ", line)]
            section = lambda line: sum(1 for divider in dividers if divider <= line)   # noqa: E731  第几节
            uses = first_uses(tree)
            with self.subTest(script=script):
                apart = {name: (line, uses[name]) for name, line in top_level_names(tree).items()
                         if name.isupper() and name in uses and section(line) != section(uses[name])}
                self.assertEqual(apart, {}, "常量: (定义的行, 第一次使用的行)：定义挪到用它的那一节")

    def test_lesson_07_core_is_short_and_starts_with_its_entry_point(self):
        # 第 07 课的核心在 200 行以内，入口 web_hits 在最前；请求接口、重试、缓存这些加固在它的选读分节线后面。
        # 它是另一种检索，和第 03 课的检索在同一个文件里
        text = source("retrieval_qa.py")
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 07 课（选读）：联网检索的核心"))
        end = next(i for i, line in enumerate(lines) if line.startswith("# ---------- 第 07 课 · 加固（选读）"))
        self.assertLessEqual(end - start, 200)
        names = top_level_names(parsed_text(text))
        defined_here = sorted((line, name) for name, line in names.items() if start < line <= end and not name.isupper())
        self.assertEqual(defined_here[0][1], "web_hits")
        for name in ("search_web", "adapt", "cached_search", "TokenBucket", "write_html", "SEARCH_PROVIDERS"):
            self.assertGreater(names[name], end + 1, name)

    def test_the_trace_is_not_woven_through_generate(self):
        import inspect
        import model_reply_assistant
        self.assertNotIn("trace", inspect.signature(model_reply_assistant.generate).parameters)
        self.assertNotIn("trace(", inspect.getsource(model_reply_assistant.generate))

if __name__ == "__main__":
    unittest.main()
